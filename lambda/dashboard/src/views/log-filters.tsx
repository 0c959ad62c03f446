import { useEffect, useState } from 'preact/hooks';
import { parseLocalDate } from '../period';
import { ENDPOINT_KINDS, type EndpointKind } from '../../../providers/types';
import { PROVIDERS } from '../providers';
import type { TokenInfo } from '../types';
import { TagFilterField } from './tag-filter-field';

export interface LogFilterValues {
  provider: string;
  /** The endpoint kind (`chat`, `responses`, …). */
  kind: '' | EndpointKind;
  /** A prefix of the model id. */
  model: string;
  requester: string;
  token_id: string;
  status: '' | 'ok' | 'error';
  cached: '' | 'true' | 'false';
  /** `YYYY-MM-DD` local dates, both ends included. */
  from: string;
  to: string;
  /** `key=value` pairs a row must all carry (the API's repeatable `tag=`; docs/tags.md). */
  tags: string[];
}

type TextFilter = Exclude<keyof LogFilterValues, 'tags'>;

export const FILTER_KEYS = [
  'provider',
  'kind',
  'model',
  'requester',
  'token_id',
  'status',
  'cached',
  'from',
  'to',
] as const satisfies readonly TextFilter[];

const EMPTY: LogFilterValues = {
  provider: '',
  kind: '',
  model: '',
  requester: '',
  token_id: '',
  status: '',
  cached: '',
  from: '',
  to: '',
  tags: [],
};

export function filtersFromParams(params: URLSearchParams): LogFilterValues {
  const status = params.get('status');
  const cached = params.get('cached');
  const date = (name: string) => (parseLocalDate(params.get(name) ?? undefined) ? params.get(name)! : '');
  const kind = params.get('kind') as EndpointKind | null;
  return {
    provider: params.get('provider') ?? '',
    kind: kind && ENDPOINT_KINDS.includes(kind) ? kind : '',
    model: params.get('model') ?? '',
    requester: params.get('requester') ?? '',
    token_id: params.get('token_id') ?? '',
    status: status === 'ok' || status === 'error' ? status : '',
    cached: cached === 'true' || cached === 'false' ? cached : '',
    from: date('from'),
    to: date('to'),
    tags: [...new Set(params.getAll('tag').filter((tag) => tag !== ''))],
  };
}

/** The filters in the hash, without the empty ones; each tag is a `tag=key=value` of its own. */
export function filtersToParams(filters: LogFilterValues): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (filters[key] !== '') params.set(key, filters[key]);
  for (const tag of filters.tags) params.append('tag', tag);
  return params;
}

/** The `/api/logs` query: local dates become the ISO times of their local midnights, `to` included. */
export interface LogQuery {
  [name: string]: string | readonly string[] | undefined;
  from?: string;
  to?: string;
  tag: readonly string[];
}

export function filtersToQuery(filters: LogFilterValues): LogQuery {
  const from = parseLocalDate(filters.from);
  const to = parseLocalDate(filters.to);
  const dayAfter = to && new Date(to.getFullYear(), to.getMonth(), to.getDate() + 1);
  const text = Object.fromEntries(FILTER_KEYS.filter((key) => filters[key] !== '').map((key) => [key, filters[key]]));
  return { ...text, from: from?.toISOString(), to: dayAfter?.toISOString(), tag: filters.tags };
}

export function hasFilters(filters: LogFilterValues): boolean {
  return FILTER_KEYS.some((key) => filters[key] !== '') || filters.tags.length > 0;
}

interface Props {
  value: LogFilterValues;
  onApply: (filters: LogFilterValues) => void;
  /** The period's model ids, offered as the model field is typed. */
  models: string[];
  tokens: TokenInfo[];
  /** The period's `key=value` tags, offered as the tag field is typed. */
  tagSuggestions: string[];
}

/**
 * Filters are edited locally and applied together, so typing a model name does not fire a query per key.
 * On a phone they fold behind a toggle so the rows stay in view.
 */
export function LogFilters({ value, onApply, models, tokens, tagSuggestions }: Props) {
  const [draft, setDraft] = useState(value);
  const [open, setOpen] = useState(false);
  const active = FILTER_KEYS.filter((key) => value[key] !== '').length + value.tags.length;
  useEffect(() => setDraft(value), [JSON.stringify(value)]);
  const [pendingTag, setPendingTag] = useState('');
  const set = <K extends keyof LogFilterValues>(key: K, v: LogFilterValues[K]) => setDraft({ ...draft, [key]: v });
  const badRange = draft.from !== '' && draft.to !== '' && draft.from > draft.to;

  return (
    <form
      class={`filters card${open ? ' is-open' : ''}`}
      aria-label="Filter logs"
      onSubmit={(event) => {
        event.preventDefault();
        if (badRange) return;
        // A tag typed but not added yet counts: Apply means "these filters", as on screen.
        const typed = pendingTag.trim();
        const tags = typed && !draft.tags.includes(typed) ? [...draft.tags, typed] : draft.tags;
        setPendingTag('');
        setOpen(false);
        onApply({ ...draft, model: draft.model.trim(), requester: draft.requester.trim(), tags });
      }}
    >
      <button
        type="button"
        class="button filters-toggle"
        aria-expanded={open}
        data-testid="logs-filters-toggle"
        onClick={() => setOpen(!open)}
      >
        {open ? 'Hide filters' : 'Filters'}
        {active > 0 && <span class="badge">{active} active</span>}
      </button>
      <ChoiceField
        label="Provider"
        testId="logs-filter-provider"
        value={draft.provider}
        onChoose={(v) => set('provider', v)}
        choices={[['', 'All providers'], ...PROVIDERS.map((p): Choice => [p.id, p.name])]}
      />
      <ChoiceField
        label="Endpoint"
        testId="logs-filter-kind"
        value={draft.kind}
        onChoose={(v) => set('kind', v as LogFilterValues['kind'])}
        choices={[['', 'All endpoints'], ...ENDPOINT_KINDS.map((kind): Choice => [kind, kind])]}
      />
      <label class="field">
        <span>Model starts with</span>
        <input
          type="text"
          value={draft.model}
          placeholder="Any model"
          autoComplete="off"
          spellcheck={false}
          list="log-model-suggestions"
          data-testid="logs-filter-model"
          onInput={(e) => set('model', e.currentTarget.value)}
        />
        <datalist id="log-model-suggestions" data-testid="logs-model-suggestions">
          {models.map((model) => (
            <option key={model} value={model} />
          ))}
        </datalist>
      </label>
      <label class="field">
        <span>Requester</span>
        <input
          type="text"
          value={draft.requester}
          placeholder="Any requester"
          autoComplete="off"
          spellcheck={false}
          data-testid="logs-filter-requester"
          onInput={(e) => set('requester', e.currentTarget.value)}
        />
      </label>
      <ChoiceField
        label="Token"
        testId="logs-filter-token"
        value={draft.token_id}
        onChoose={(v) => set('token_id', v)}
        choices={[
          ['', 'Any token'],
          ...tokens.map((t): Choice => [t.token_id, `${t.name || t.token_id}${t.revoked_at ? ' (revoked)' : ''}`]),
          // A token in the link that is not listed (another account's, or gone) still shows as chosen.
          ...(draft.token_id && !tokens.some((t) => t.token_id === draft.token_id)
            ? [[draft.token_id, draft.token_id] as Choice]
            : []),
        ]}
      />
      <ChoiceField
        label="Status"
        testId="logs-filter-status"
        value={draft.status}
        onChoose={(v) => set('status', v as LogFilterValues['status'])}
        choices={[
          ['', 'Any status'],
          ['ok', 'OK'],
          ['error', 'Error'],
        ]}
      />
      <ChoiceField
        label="Cache"
        testId="logs-filter-cached"
        value={draft.cached}
        onChoose={(v) => set('cached', v as LogFilterValues['cached'])}
        choices={[
          ['', 'Cached or not'],
          ['true', 'Cached only'],
          ['false', 'Not cached'],
        ]}
      />
      <label class="field">
        <span>From</span>
        <input
          type="date"
          value={draft.from}
          max={draft.to || undefined}
          data-testid="logs-filter-from"
          onInput={(e) => set('from', e.currentTarget.value)}
          aria-invalid={badRange}
        />
      </label>
      <label class="field">
        <span>To</span>
        <input
          type="date"
          value={draft.to}
          min={draft.from || undefined}
          data-testid="logs-filter-to"
          onInput={(e) => set('to', e.currentTarget.value)}
          aria-invalid={badRange}
        />
      </label>
      <TagFilterField
        tags={draft.tags}
        onTags={(tags) => set('tags', tags)}
        text={pendingTag}
        onText={setPendingTag}
        suggestions={tagSuggestions}
      />
      {badRange && (
        <p class="field-error filters-note" role="alert">
          From must be on or before To.
        </p>
      )}
      <div class="filters-actions">
        <button type="submit" class="button button-primary" data-testid="logs-apply" disabled={badRange}>
          Apply
        </button>
        <button
          type="button"
          class="button"
          data-testid="logs-clear"
          onClick={() => {
            setOpen(false);
            setPendingTag('');
            onApply(EMPTY);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

/** An option's value and what it shows. */
type Choice = readonly [value: string, label: string];

/** One filter chosen from a list; the first choice is the "any" one. */
function ChoiceField(props: {
  label: string;
  testId: string;
  value: string;
  onChoose: (value: string) => void;
  choices: readonly Choice[];
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select value={props.value} data-testid={props.testId} onChange={(e) => props.onChoose(e.currentTarget.value)}>
        {props.choices.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}
