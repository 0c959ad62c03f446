import { formatDateTime, formatInt, formatMs, formatUsd } from '../format';
import { providerName } from '../providers';
import type { LogRow } from '../types';

function Tokens({ row }: { row: LogRow }) {
  const cacheRead = row.cache_read_tokens ?? 0;
  const cacheWrite = row.cache_write_tokens ?? 0;
  const cacheNote =
    cacheRead || cacheWrite
      ? `Prompt cache: ${formatInt(cacheRead)} read, ${formatInt(cacheWrite)} written`
      : undefined;
  return (
    <span title={cacheNote}>
      {formatInt(row.input_tokens)} / {formatInt(row.output_tokens)}
    </span>
  );
}

function Cost({ row }: { row: LogRow }) {
  if (row.cached) {
    return (
      <span class="stack">
        <span>{formatUsd(row.cost_usd)}</span>
        <span class="saved" data-testid="log-saved">
          saved {formatUsd(row.saved_usd)}
        </span>
      </span>
    );
  }
  if (row.priced === false && row.status_code < 400) {
    return (
      <span class="muted" title="No price is known for this model, so its cost is not counted.">
        unpriced
      </span>
    );
  }
  if (row.usage_estimated) {
    return (
      <span class="stack">
        <span>≈ {formatUsd(row.cost_usd)}</span>
        <span
          class="badge badge-estimated"
          data-testid="badge-estimated"
          title="The stream was cut off before the provider reported its usage: tokens and cost are partly estimated."
        >
          estimate
        </span>
      </span>
    );
  }
  return <span>{formatUsd(row.cost_usd)}</span>;
}

function Status({ row }: { row: LogRow }) {
  const ok = row.status_code < 400;
  return (
    <span class="status-cell">
      <span class={`status ${ok ? 'status-ok' : 'status-error'}`}>{row.status_code}</span>
      {row.cached && (
        <span class="badge badge-cached" data-testid="badge-cached">
          Cached
        </span>
      )}
      {row.stream && <span class="badge">stream</span>}
    </span>
  );
}

/** Opening is a click anywhere on the entry, or Enter when it has focus. */
export function LogTable({ rows, openId, onOpen }: { rows: LogRow[]; openId?: string; onOpen: (id: string) => void }) {
  return (
    <div class="card log-card">
      <table class="table log-table" data-testid="logs-table">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Provider</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Model</th>
            <th scope="col" class="num">
              Tokens in / out
            </th>
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Requester</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        {rows.map((row) => (
          <tbody
            key={row.id}
            class={`log-entry${row.status_code >= 400 ? ' is-error' : ''}${row.id === openId ? ' is-open' : ''}`}
            tabIndex={0}
            aria-label={`Request at ${formatDateTime(row.ts, { seconds: true })}, ${row.model || 'no model'}, status ${row.status_code}: open details`}
            onClick={() => onOpen(row.id)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && event.target === event.currentTarget) {
                event.preventDefault();
                onOpen(row.id);
              }
            }}
            data-testid="log-row"
            data-id={row.id}
            data-provider={row.provider}
            data-kind={row.kind}
            data-model={row.model}
            data-cached={String(row.cached)}
            data-status={row.status_code}
          >
            <tr>
              <td data-label="Time">
                <time dateTime={row.ts}>{formatDateTime(row.ts, { seconds: true })}</time>
              </td>
              <td data-label="Provider">{providerName(row.provider)}</td>
              <td data-label="Endpoint" class="mono" data-testid="log-kind">
                {row.kind ?? '—'}
              </td>
              <td data-label="Model" class="mono break">
                {row.model || '—'}
              </td>
              <td data-label="Tokens in / out" class="num">
                <Tokens row={row} />
              </td>
              <td data-label="Cost" class="num">
                <Cost row={row} />
              </td>
              <td data-label="Latency" class="num">
                {formatMs(row.latency_ms)}
              </td>
              <td data-label="Requester" class="break">
                {row.requester ?? <span class="muted">—</span>}
              </td>
              <td data-label="Status">
                <Status row={row} />
              </td>
            </tr>
            {row.error && (
              <tr class="log-error-row">
                <td colSpan={9} data-testid="log-error">
                  <span class="log-error-label">Error:</span> {row.error}
                </td>
              </tr>
            )}
          </tbody>
        ))}
      </table>
    </div>
  );
}
