import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useApi } from '../api-context';
import { CopyButton } from '../components/copy-button';
import { ErrorMessage } from '../components/error-message';
import { SkeletonRows } from '../components/skeleton';
import { formatDateTime, formatInt, formatMs, formatUsd } from '../format';
import { PROVIDERS, providerName } from '../providers';
import { hrefFor } from '../router';
import { sortedTags } from '../tags';
import type { LogRow, TokenInfo } from '../types';
import { useAsync } from '../use-async';

interface Props {
  id: string;
  /** The row as the list already has it; fetched by id when the page was opened from a link. */
  known: LogRow | undefined;
  tokens: TokenInfo[];
  onClose: () => void;
}

type Field = [label: string, value: ComponentChildren, key: string];

const yesNo = (value: boolean | undefined) => (value ? 'yes' : 'no');

/** Fields this panel lays out itself; any other field a row carries is listed after them, as sent. */
const SHOWN = new Set([
  'id',
  'ts',
  'provider',
  'kind',
  'model',
  'mode',
  'token_id',
  'requester',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'cost_nanos',
  'saved_usd',
  'saved_nanos',
  'priced',
  'price_source',
  'usage_estimated',
  'latency_ms',
  'status_code',
  'stream',
  'cached',
  'error',
  'tags',
]);

/** The row's tags (the request's and its token's), each a link to the logs carrying it. */
function TagList({ row }: { row: LogRow }) {
  const tags = sortedTags(row.tags);
  if (tags.length === 0) return <span class="muted">none (no x-proxy-tags, no token tags)</span>;
  return (
    <ul class="tag-chips" data-testid="log-detail-tags">
      {tags.map(([key, value]) => (
        <li key={key} class="tag-chip is-static" data-testid="log-detail-tag" data-tag={`${key}=${value}`}>
          <a
            href={hrefFor('logs', new URLSearchParams([['tag', `${key}=${value}`]]))}
            class="mono"
            title={`Show the requests tagged ${key}=${value}`}
          >
            {key}={value}
          </a>
        </li>
      ))}
    </ul>
  );
}

function fieldsOf(row: LogRow, tokens: TokenInfo[]): Field[] {
  const extra = row as unknown as Record<string, unknown>;
  const token = tokens.find((t) => t.token_id === row.token_id);
  const fields: Field[] = [
    [
      'Time',
      <span>
        <time dateTime={row.ts}>{formatDateTime(row.ts, { seconds: true })}</time>{' '}
        <span class="sub mono">{row.ts}</span>
      </span>,
      'ts',
    ],
    ['Provider', providerName(row.provider), 'provider'],
  ];
  if (extra.kind !== undefined)
    fields.push(['Kind', typeof extra.kind === 'string' ? extra.kind : JSON.stringify(extra.kind), 'kind']);
  fields.push(
    ['Model', <span class="mono">{row.model || '—'}</span>, 'model'],
    ['Mode', row.mode === 'pass-through' ? 'pass-through (caller’s own key)' : storedMode(row.provider), 'mode'],
    [
      'Token',
      <span>
        {token ? token.name || '(unnamed)' : '—'} <span class="sub mono">{row.token_id}</span>
      </span>,
      'token_id',
    ],
    ['Requester', row.requester ?? <span class="muted">none (no x-proxy-user)</span>, 'requester'],
    ['Tags', <TagList row={row} />, 'tags'],
    ['Input tokens', formatInt(row.input_tokens), 'input_tokens'],
    ['Output tokens', formatInt(row.output_tokens), 'output_tokens'],
    ['Cache-read tokens', formatInt(row.cache_read_tokens ?? 0), 'cache_read_tokens'],
    ['Cache-write tokens', formatInt(row.cache_write_tokens ?? 0), 'cache_write_tokens'],
    [
      'Cost',
      row.priced === false && !row.cached && row.status_code < 400 ? (
        'unpriced'
      ) : (
        <span>
          {formatUsd(row.cost_usd)} <span class="sub">{formatInt(row.cost_nanos)} nano-USD</span>
          {row.usage_estimated && (
            <span class="sub" data-testid="log-detail-estimated">
              {' '}
              · estimated: the stream was cut off before the provider reported its usage
            </span>
          )}
        </span>
      ),
      'cost_usd',
    ],
    ['Saved by cache', formatUsd(row.saved_usd), 'saved_usd'],
    [
      'Price source',
      row.priced === false ? 'none: no price is known for this model' : (row.price_source ?? 'price table'),
      'priced',
    ],
    ['Latency', formatMs(row.latency_ms), 'latency_ms'],
    [
      'Status',
      <span class={row.status_code < 400 ? 'status status-ok' : 'status status-error'}>{row.status_code}</span>,
      'status_code',
    ],
    ['Stream', yesNo(row.stream), 'stream'],
    ['Cached', yesNo(row.cached), 'cached'],
  );
  for (const [key, value] of Object.entries(extra)) {
    if (!SHOWN.has(key) && value !== undefined && value !== null)
      fields.push([key, <span class="mono">{typeof value === 'string' ? value : JSON.stringify(value)}</span>, key]);
  }
  return fields;
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select, textarea, [tabindex]:not([tabindex="-1"])';

/** A modal dialog keeps Tab and Shift+Tab inside itself, wrapping at either end. */
function keepFocusInside(dialog: HTMLElement, event: KeyboardEvent): void {
  const focusable = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)];
  if (focusable.length === 0) return;
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  const active = document.activeElement;
  const outside = !(active instanceof Node) || !dialog.contains(active) || !focusable.includes(active as HTMLElement);
  if (event.shiftKey ? outside || active === first : outside || active === last) {
    event.preventDefault();
    (event.shiftKey ? last : first).focus();
  }
}

/** One request in full: a side panel on a laptop, a full-screen sheet on a phone. Esc or the button closes it. */
export function LogDetail({ id, known, tokens, onClose }: Props) {
  const api = useApi();
  const heading = useRef<HTMLHeadingElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const opener = useRef<Element | null>(document.activeElement);
  const fetched = useAsync(() => (known ? Promise.resolve(known) : api.logRow(id)), [id, Boolean(known)]);
  const row = known ?? fetched.data;

  useEffect(() => {
    heading.current?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
      if (event.key === 'Tab' && panel.current) keepFocusInside(panel.current, event);
    };
    addEventListener('keydown', onKey);
    const back = opener.current;
    return () => {
      removeEventListener('keydown', onKey);
      // Keyboard users land back on the row they opened.
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    };
  }, [id]);

  return (
    <div class="drawer-layer">
      <div class="drawer-backdrop" onClick={onClose} />
      <div
        ref={panel}
        class="drawer"
        role="dialog"
        aria-modal="true"
        aria-labelledby="log-detail-title"
        data-testid="log-detail"
        data-id={id}
        data-state={row ? 'ready' : fetched.error ? 'error' : 'loading'}
      >
        <div class="drawer-head">
          <h2 id="log-detail-title" class="card-title" tabIndex={-1} ref={heading}>
            Request details
          </h2>
          <button
            type="button"
            class="button button-small"
            onClick={onClose}
            data-testid="log-detail-close"
            aria-label="Close details"
          >
            Close
          </button>
        </div>
        <div class="detail-id">
          <span class="muted">Request id (x-proxy-request-id)</span>
          <div class="secret-row">
            <code data-testid="log-detail-id">{id}</code>
            <CopyButton text={id} label="Copy id" testId="log-detail-copy" />
          </div>
        </div>
        <ErrorMessage error={fetched.error} testId="log-detail-error" onRetry={fetched.reload} />
        {row ? (
          <>
            {row.error && (
              <div class="notice notice-error detail-error" data-testid="log-detail-error-text">
                <strong>Error</strong>
                <pre>{row.error}</pre>
              </div>
            )}
            <dl class="detail-fields">
              {fieldsOf(row, tokens).map(([label, value, key]) => (
                <div class="detail-field" key={key} data-field={key}>
                  <dt>{label}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
          </>
        ) : (
          !fetched.error && <SkeletonRows rows={8} label="Loading the request…" />
        )}
      </div>
    </div>
  );
}

/** Stored mode of a provider reached through AWS: signed with the proxy's own role unless the account saved a key (docs/bedrock.md). */
function storedMode(provider: string): string {
  return PROVIDERS.find((p) => p.id === provider)?.signsWithRole
    ? 'stored (the proxy’s AWS role, or the saved key)'
    : 'stored key';
}
