import { useEffect, useState } from 'preact/hooks';
import { AUDIT_ACTIONS } from '../../../api/audit-routes';
import { csvCell } from '../../../api/csv-cell';
import type { Query } from '../api';
import { useApi } from '../api-context';
import { EmptyState } from '../components/empty-state';
import { ErrorMessage } from '../components/error-message';
import { formatDateTime } from '../format';
import { hrefFor } from '../router';
import type { AuditEntry } from '../types';
import { useAction } from '../use-action';

const PAGE_SIZE = 100;
/** The CSV holds at most this many pages: 50,000 entries. */
const CSV_PAGES = 100;

interface Filters {
  action: string;
  actor: string;
  from: string;
  to: string;
}

/** Filters live in the address (`#/audit?action=key.saved`), so a filtered view can be shared. */
function filtersOf(params: URLSearchParams): Filters {
  return {
    action: params.get('action') ?? '',
    actor: params.get('actor') ?? '',
    from: params.get('from') ?? '',
    to: params.get('to') ?? '',
  };
}

/** A date field's day as the API's time: the start of `from`'s day, the end of `to`'s (UTC). */
function queryOf(filters: Filters): Query {
  return {
    action: filters.action || undefined,
    actor: filters.actor.trim() || undefined,
    from: filters.from ? `${filters.from}T00:00:00Z` : undefined,
    to: filters.to ? new Date(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000).toISOString() : undefined,
  };
}

const shown = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value));

const CSV_HEADER = ['at', 'actor', 'actor_name', 'address', 'action', 'target', 'before', 'after'];
const csvRow = (e: AuditEntry) =>
  [e.at, e.actor, e.actor_name ?? '', e.address ?? '', e.action, e.target, shown(e.before), shown(e.after)]
    .map(csvCell)
    .join(',');

export function Audit({ params }: { params: URLSearchParams }) {
  const api = useApi();
  const filters = filtersOf(params);
  const key = JSON.stringify(filters);
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const { busy, error, run } = useAction();
  const csv = useAction();

  const load = (from: string | null) =>
    run(async () => {
      const page = await api.audit({ ...queryOf(filters), limit: PAGE_SIZE, cursor: from ?? undefined });
      setEntries((before) => (from ? [...before, ...page.items] : page.items));
      setCursor(page.next_cursor);
      setLoaded(true);
    });

  useEffect(() => {
    document.title = 'Audit · AI Usage Proxy';
    void load(null);
  }, [key]);

  const setFilter = (name: keyof Filters, value: string) => {
    const next = { ...filters, [name]: value };
    location.hash = hrefFor('audit', Object.fromEntries(Object.entries(next).filter(([, v]) => v !== '')));
  };

  const download = () =>
    csv.run(async () => {
      const lines = [CSV_HEADER.join(',')];
      let next: string | null = null;
      for (let page = 0; page < CSV_PAGES; page++) {
        const answer = await api.audit({ ...queryOf(filters), limit: 500, cursor: next ?? undefined });
        lines.push(...answer.items.map(csvRow));
        next = answer.next_cursor;
        if (!next) break;
      }
      const url = URL.createObjectURL(new Blob([`${lines.join('\r\n')}\r\n`], { type: 'text/csv' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `audit-log-${new Date().toISOString().slice(0, 10)}.csv`;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });

  return (
    <section data-testid="page-audit" data-state={loaded ? 'ready' : 'loading'}>
      <h1 tabIndex={-1}>Audit log</h1>
      <p class="muted">
        Every change made through the management API or this dashboard: who, when, from where, and what changed.
      </p>
      <form class="card filters" onSubmit={(event) => event.preventDefault()} data-testid="audit-filters">
        <label>
          Action
          <select
            value={filters.action}
            onChange={(e) => setFilter('action', e.currentTarget.value)}
            data-testid="audit-action"
          >
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((action) => (
              <option key={action} value={action}>
                {action}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <input
            type="text"
            value={filters.actor}
            placeholder="token:… or person:…"
            onChange={(e) => setFilter('actor', e.currentTarget.value)}
            data-testid="audit-actor"
          />
        </label>
        <label>
          From
          <input
            type="date"
            value={filters.from}
            onChange={(e) => setFilter('from', e.currentTarget.value)}
            data-testid="audit-from"
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={filters.to}
            onChange={(e) => setFilter('to', e.currentTarget.value)}
            data-testid="audit-to"
          />
        </label>
        <button
          type="button"
          class="button button-small"
          disabled={csv.busy}
          onClick={() => void download()}
          data-testid="audit-csv"
        >
          {csv.busy ? 'Preparing CSV…' : 'Download CSV'}
        </button>
      </form>
      <ErrorMessage error={error ?? csv.error} testId="audit-error" />
      {loaded && entries.length === 0 ? (
        <EmptyState title="No changes recorded" testId="audit-empty">
          Nothing matches these filters.
        </EmptyState>
      ) : (
        <div class="table-wrap card">
          <table class="data-table" data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">From</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id} data-testid="audit-row" data-action={e.action}>
                  <td>{formatDateTime(e.at, { seconds: true })}</td>
                  <td title={e.actor}>{e.actor_name ?? e.actor}</td>
                  <td>{e.address ?? ''}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.target}</td>
                  <td>{e.before !== null && <code>{shown(e.before)}</code>}</td>
                  <td>{e.after !== null && <code>{shown(e.after)}</code>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" class="button" disabled={busy} onClick={() => void load(cursor)} data-testid="audit-more">
          {busy ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
