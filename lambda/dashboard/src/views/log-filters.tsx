import { useEffect, useState } from 'preact/hooks';
import { PROVIDERS } from '../providers';

export interface LogFilterValues {
  provider: string;
  model: string;
  requester: string;
  status: '' | 'ok' | 'error';
  cached: '' | 'true' | 'false';
}

export const FILTER_KEYS = ['provider', 'model', 'requester', 'status', 'cached'] as const;

export function filtersFromParams(params: URLSearchParams): LogFilterValues {
  const status = params.get('status');
  const cached = params.get('cached');
  return {
    provider: params.get('provider') ?? '',
    model: params.get('model') ?? '',
    requester: params.get('requester') ?? '',
    status: status === 'ok' || status === 'error' ? status : '',
    cached: cached === 'true' || cached === 'false' ? cached : '',
  };
}

export function hasFilters(filters: LogFilterValues): boolean {
  return FILTER_KEYS.some((key) => filters[key] !== '');
}

interface Props {
  value: LogFilterValues;
  onApply: (filters: LogFilterValues) => void;
}

/**
 * Filters are edited locally and applied together, so typing a model name does not fire a query per key.
 * On a phone they fold behind a toggle so the rows stay in view.
 */
export function LogFilters({ value, onApply }: Props) {
  const [draft, setDraft] = useState(value);
  const [open, setOpen] = useState(false);
  const active = FILTER_KEYS.filter((key) => value[key] !== '').length;
  useEffect(() => setDraft(value), [JSON.stringify(value)]);
  const set = <K extends keyof LogFilterValues>(key: K, v: LogFilterValues[K]) => setDraft({ ...draft, [key]: v });
  const empty: LogFilterValues = { provider: '', model: '', requester: '', status: '', cached: '' };

  return (
    <form
      class={`filters card${open ? ' is-open' : ''}`}
      aria-label="Filter logs"
      onSubmit={(event) => {
        event.preventDefault();
        setOpen(false);
        onApply({ ...draft, model: draft.model.trim(), requester: draft.requester.trim() });
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
      <label class="field">
        <span>Provider</span>
        <select
          value={draft.provider}
          data-testid="logs-filter-provider"
          onChange={(e) => set('provider', e.currentTarget.value)}
        >
          <option value="">All providers</option>
          {PROVIDERS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>Model</span>
        <input
          type="text"
          value={draft.model}
          placeholder="Any model"
          autoComplete="off"
          spellcheck={false}
          data-testid="logs-filter-model"
          onInput={(e) => set('model', e.currentTarget.value)}
        />
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
      <label class="field">
        <span>Status</span>
        <select
          value={draft.status}
          data-testid="logs-filter-status"
          onChange={(e) => set('status', e.currentTarget.value as LogFilterValues['status'])}
        >
          <option value="">Any status</option>
          <option value="ok">OK</option>
          <option value="error">Error</option>
        </select>
      </label>
      <label class="field">
        <span>Cache</span>
        <select
          value={draft.cached}
          data-testid="logs-filter-cached"
          onChange={(e) => set('cached', e.currentTarget.value as LogFilterValues['cached'])}
        >
          <option value="">Cached or not</option>
          <option value="true">Cached only</option>
          <option value="false">Not cached</option>
        </select>
      </label>
      <div class="filters-actions">
        <button type="submit" class="button button-primary" data-testid="logs-apply">
          Apply
        </button>
        <button
          type="button"
          class="button"
          data-testid="logs-clear"
          onClick={() => {
            setOpen(false);
            onApply(empty);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
