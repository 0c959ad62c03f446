import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { AutoRefreshToggle, useAutoRefresh } from '../auto-refresh';
import { EmptyState } from '../components/empty-state';
import { ErrorMessage } from '../components/error-message';
import { SkeletonRows } from '../components/skeleton';
import { hrefFor, logDetailHref } from '../router';
import type { LogRow } from '../types';
import { useAsync } from '../use-async';
import { CsvDownload } from './csv-download';
import { LogDetail } from './log-detail';
import { mergeRefreshed } from './log-pages';
import {
  filtersFromParams,
  filtersToParams,
  filtersToQuery,
  hasFilters,
  LogFilters,
  type LogFilterValues,
} from './log-filters';
import { LogTable } from './log-table';

/** Model suggestions come from this many days back when no date range is set. */
const SUGGESTION_DAYS = 30;

const PAGE_SIZE = 50;

/** The stats' name for values past a key's cap (docs/tags.md): not a value a row carries, so not a filter. */
const OTHER_VALUE = '(other)';

interface LogsState {
  rows: LogRow[];
  cursor: string | null;
  /** `first`: the first page is loading (rows are being replaced); `more`: a page is being appended. */
  loading: 'first' | 'more' | null;
  error: unknown;
  loadedOnce: boolean;
}

export function Logs({ params, detail }: { params: URLSearchParams; detail?: string }) {
  const api = useApi();
  const filters = filtersFromParams(params);
  const filterKey = JSON.stringify(filters);
  const query = filtersToQuery(filters);
  const tokens = useAsync(() => api.tokens(), []);
  // The models seen in the chosen dates (or the last 30 days), for the model field's suggestions.
  const stats = useAsync(() => {
    const to = query.to ?? new Date().toISOString();
    const from = query.from ?? new Date(Date.parse(to) - SUGGESTION_DAYS * 86_400_000).toISOString();
    return api.stats(from, to);
  }, [filters.from, filters.to]);
  const models = useMemo(
    () => [...new Set((stats.data?.by_model ?? []).filter((m) => m.other === undefined).map((m) => m.model))].sort(),
    [stats.data],
  );
  const tagSuggestions = useMemo(
    () =>
      Object.entries(stats.data?.by_tag ?? {})
        .flatMap(([key, values]) =>
          Object.keys(values)
            .filter((value) => value !== OTHER_VALUE)
            .map((value) => `${key}=${value}`),
        )
        .sort(),
    [stats.data],
  );
  const [state, setState] = useState<LogsState>({
    rows: [],
    cursor: null,
    loading: 'first',
    error: undefined,
    loadedOnce: false,
  });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);

  // A refresh (the button or the timer) keeps the pages already loaded; new filters start over.
  const keepLoaded = useRef(false);

  const load = async (cursor: string | null) => {
    const call = ++latest.current;
    const merge = cursor === null && keepLoaded.current;
    keepLoaded.current = false;
    setState((s) => ({ ...s, loading: cursor ? 'more' : 'first', error: undefined }));
    try {
      const page = await api.logs({ ...query, limit: PAGE_SIZE, cursor: cursor ?? undefined });
      if (call !== latest.current) return;
      setState((s) => {
        const next = cursor
          ? { rows: [...s.rows, ...page.items], cursor: page.next_cursor }
          : merge
            ? mergeRefreshed(s, page)
            : { rows: page.items, cursor: page.next_cursor };
        return { ...next, loading: null, error: undefined, loadedOnce: true };
      });
    } catch (error) {
      if (call !== latest.current) return;
      setState((s) => ({ ...s, loading: null, error }));
    }
  };

  useEffect(() => {
    void load(null);
  }, [filterKey, generation]);

  const refresh = useCallback(() => {
    keepLoaded.current = true;
    setGeneration((g) => g + 1);
  }, []);
  const auto = useAutoRefresh(refresh);

  const apply = (next: LogFilterValues) => {
    const href = hrefFor('logs', filtersToParams(next));
    // Re-applying the same filters does not change the hash; reload so the button still does something.
    if (location.hash === href) setGeneration((g) => g + 1);
    else location.hash = href;
  };

  const filtered = hasFilters(filters);
  const firstLoad = state.loading === 'first' && !state.loadedOnce;
  const pageState = state.loading ? 'loading' : state.error ? 'error' : 'ready';

  return (
    <div
      class={`page${state.loading === 'first' && state.loadedOnce ? ' is-stale' : ''}`}
      data-testid="page-logs"
      data-state={pageState}
    >
      <div class="page-head">
        <h1 tabIndex={-1}>Logs</h1>
        <div class="toolbar">
          <AutoRefreshToggle {...auto} testId="logs-auto-refresh" />
          <CsvDownload query={query} />
          <button
            type="button"
            class="button button-small"
            data-testid="logs-refresh"
            disabled={state.loading !== null}
            onClick={refresh}
          >
            Refresh
          </button>
        </div>
      </div>
      <LogFilters
        value={filters}
        onApply={apply}
        models={models}
        tokens={tokens.data?.tokens ?? []}
        tagSuggestions={tagSuggestions}
      />
      <ErrorMessage
        error={state.error}
        testId="logs-error"
        onRetry={() => void load(state.loadedOnce ? state.cursor : null)}
      />
      {firstLoad ? (
        <div class="card log-card">
          <SkeletonRows rows={8} label="Loading logs…" />
        </div>
      ) : state.rows.length === 0 && !state.error ? (
        filtered ? (
          <EmptyState title="No requests match these filters." testId="logs-empty">
            Loosen a filter or <a href={hrefFor('logs')}>show all requests</a>.
          </EmptyState>
        ) : (
          <EmptyState title="No requests yet." testId="logs-empty">
            Save a provider key on <a href={hrefFor('integrations')}>Integrations</a> and point your SDK at{' '}
            <code>{location.origin}/api/proxy</code>. Each request appears here, newest first, within a second.
          </EmptyState>
        )
      ) : (
        <>
          <LogTable rows={state.rows} openId={detail} onOpen={(id) => (location.hash = logDetailHref(id, params))} />
          <div class="load-more">
            {state.cursor ? (
              <button
                type="button"
                class="button"
                data-testid="logs-load-more"
                disabled={state.loading !== null}
                onClick={() => void load(state.cursor)}
              >
                {state.loading === 'more' ? 'Loading…' : 'Load more'}
              </button>
            ) : (
              state.rows.length > 0 && (
                <p class="muted" data-testid="logs-end">
                  That is all for {filtered ? 'these filters' : 'now'}.
                </p>
              )
            )}
          </div>
        </>
      )}
      {detail && (
        <LogDetail
          id={detail}
          known={state.rows.find((r) => r.id === detail)}
          tokens={tokens.data?.tokens ?? []}
          onClose={() => (location.hash = hrefFor('logs', filtersToParams(filters)))}
        />
      )}
      <div class="sr-only" aria-live="polite">
        {state.loading ? '' : state.loadedOnce ? `${state.rows.length} requests shown.` : ''}
      </div>
    </div>
  );
}
