import { useMemo } from 'preact/hooks';
import { useApi } from '../api-context';
import { EmptyState } from '../components/empty-state';
import { ErrorMessage } from '../components/error-message';
import { SkeletonRows } from '../components/skeleton';
import { AutoRefreshToggle, useAutoRefresh } from '../auto-refresh';
import { ChartSkeleton, TimeChart } from '../components/time-chart';
import { StatCard } from '../components/stat-card';
import { formatInt, formatMs, formatPercent, formatUsd } from '../format';
import { periodFromParams, periodRange, periodToParams, type Period } from '../period';
import { hrefFor } from '../router';
import type { Stats } from '../types';
import { useAsync } from '../use-async';
import { BudgetBanner } from './budgets/budget-banner';
import { timeSeries } from './overview-charts';
import { PeriodPicker } from './period-picker';
import { TopModels, TopRequesters, TopTokens } from './overview-tables';
import { SpendByTag } from './overview-tags';

/** What the cost leaves out (unpriced requests) and how much of it is estimated (cut-off streams). */
function CostDetail({ totals }: { totals: Stats['totals'] }) {
  const estimated = totals.estimated_requests > 0 && (
    <span data-testid="cost-estimated" title="Streams cut off before the provider reported their usage">
      {formatUsd(totals.estimated_cost_usd)} of it estimated ({formatInt(totals.estimated_requests)} cut-off{' '}
      {totals.estimated_requests === 1 ? 'stream' : 'streams'})
    </span>
  );
  const unpriced = totals.unpriced_requests > 0 && `+ ${formatInt(totals.unpriced_requests)} unpriced requests`;
  if (!estimated && !unpriced) return null;
  return (
    <>
      {estimated}
      {estimated && unpriced && ' · '}
      {unpriced}
    </>
  );
}

function Cards({ stats }: { stats: Stats | undefined }) {
  const t = stats?.totals;
  const value = <T,>(f: (totals: NonNullable<typeof t>) => T) => (t ? f(t) : undefined);
  return (
    <div class="cards">
      <StatCard
        title="Requests"
        testId="card-requests"
        value={value((x) => formatInt(x.requests))}
        raw={t?.requests}
        detail={t && t.requests > 0 && `avg ${formatMs(t.latency_avg_ms)} · p95 ${formatMs(t.latency_p95_ms)}`}
      />
      <StatCard
        title="Cost"
        testId="card-cost"
        value={value((x) => formatUsd(x.cost_usd))}
        raw={t?.cost_usd}
        detail={t && <CostDetail totals={t} />}
      />
      <StatCard
        title="Savings"
        testId="card-savings"
        accent
        value={value((x) => formatUsd(x.savings_usd))}
        raw={t?.savings_usd}
        detail="saved through caching"
      />
      <StatCard
        title="Tokens in"
        testId="card-tokens-in"
        value={value((x) => formatInt(x.input_tokens))}
        raw={t?.input_tokens}
      />
      <StatCard
        title="Tokens out"
        testId="card-tokens-out"
        value={value((x) => formatInt(x.output_tokens))}
        raw={t?.output_tokens}
      />
      <StatCard
        title="Cache hit rate"
        testId="card-cache-hit-rate"
        value={value((x) => formatPercent(x.cache_hits, x.requests))}
        raw={t?.cache_hits}
        detail={t && t.requests > 0 && `${formatInt(t.cache_hits)} of ${formatInt(t.requests)} from cache`}
      />
      <StatCard
        title="Errors"
        testId="card-errors"
        value={value((x) => formatInt(x.errors))}
        raw={t?.errors}
        detail={t && t.requests > 0 && `${formatPercent(t.errors, t.requests)} of requests`}
      />
    </div>
  );
}

const CHART_TITLES = ['Cost', 'Requests', 'Tokens in / out', 'Latency'] as const;

function Charts({ stats }: { stats: Stats | undefined }) {
  const series = useMemo(() => (stats ? timeSeries(stats) : undefined), [stats]);
  if (!stats || !series) {
    return (
      <div class="charts">
        {CHART_TITLES.map((title) => (
          <ChartSkeleton key={title} title={title} />
        ))}
      </div>
    );
  }
  const per = series.unit === 'hour' ? 'per hour' : 'per day';
  const common = { labels: series.labels, titles: series.titles, unit: series.unit };
  const wholeLatency = (s: { label: string }) =>
    s.label === 'p95' ? stats.totals.latency_p95_ms : stats.totals.latency_avg_ms;
  return (
    <div class="charts" data-testid="charts" data-unit={series.unit}>
      <TimeChart
        {...common}
        title={`Cost ${per}`}
        testId="chart-cost"
        kind="bars"
        series={series.cost}
        format={formatUsd}
      />
      <TimeChart
        {...common}
        title={`Requests ${per}`}
        testId="chart-requests"
        kind="bars"
        series={series.requests}
        format={formatInt}
        integer
      />
      <TimeChart
        {...common}
        title={`Tokens in / out ${per}`}
        testId="chart-tokens"
        kind="bars"
        series={series.tokens}
        format={formatInt}
        integer
      />
      <TimeChart
        {...common}
        title={`Latency ${per}`}
        testId="chart-latency"
        kind="lines"
        series={series.latency}
        format={formatMs}
        summary={wholeLatency}
      />
    </div>
  );
}

function NoRequests() {
  const base = `${location.origin}/api/proxy`;
  return (
    <div class="charts-empty">
      <EmptyState title="No requests in this period yet." testId="overview-empty">
        <ol class="steps">
          <li>
            Save a provider key on <a href={hrefFor('integrations')}>Integrations</a> (or send your own key in
            pass-through mode).
          </li>
          <li>
            Point your SDK at <code>{base}</code> with a proxy token: the one you signed in with, or an app token from{' '}
            <a href={hrefFor('tokens')}>Tokens</a>. Integrations has a snippet per provider.
          </li>
          <li>
            Send a request: it shows up here and in <a href={hrefFor('logs')}>Logs</a> within a second.
          </li>
        </ol>
      </EmptyState>
    </div>
  );
}

export function Overview({ params }: { params: URLSearchParams }) {
  const api = useApi();
  const period = periodFromParams(params);
  const periodKey = JSON.stringify(period);
  const stats = useAsync(() => {
    const { from, to } = periodRange(period);
    return api.stats(from, to);
  }, [periodKey]);
  const setPeriod = (next: Period) => {
    location.hash = hrefFor('overview', periodToParams(next));
  };
  const auto = useAutoRefresh(stats.reload);
  const data = stats.data;
  const state = stats.loading ? 'loading' : stats.error ? 'error' : 'ready';

  return (
    <div class={`page${stats.loading && data ? ' is-stale' : ''}`} data-testid="page-overview" data-state={state}>
      <div class="page-head">
        <h1 tabIndex={-1}>Overview</h1>
        <PeriodPicker period={period} onChange={setPeriod}>
          <AutoRefreshToggle {...auto} testId="overview-auto-refresh" />
          <button
            type="button"
            class="button button-small"
            onClick={stats.reload}
            data-testid="overview-refresh"
            disabled={stats.loading}
          >
            Refresh
          </button>
        </PeriodPicker>
      </div>
      <BudgetBanner />
      <ErrorMessage error={stats.error} testId="overview-error" onRetry={stats.reload} />
      <div aria-live="polite" class="sr-only">
        {stats.loading ? 'Loading usage…' : stats.data ? 'Usage loaded.' : ''}
      </div>
      <Cards stats={data} />
      {data && data.totals.requests === 0 ? <NoRequests /> : <Charts stats={data} />}
      <div class="tables">
        {data ? (
          <>
            <TopModels stats={data} />
            <TopRequesters stats={data} />
            <TopTokens stats={data} />
            <SpendByTag stats={data} />
          </>
        ) : (
          <>
            <section class="card table-card">
              <h2 class="card-title">Top models</h2>
              <SkeletonRows rows={4} />
            </section>
            <section class="card table-card">
              <h2 class="card-title">Top requesters</h2>
              <SkeletonRows rows={4} />
            </section>
            <section class="card table-card">
              <h2 class="card-title">Top tokens</h2>
              <SkeletonRows rows={4} />
            </section>
            <section class="card table-card">
              <h2 class="card-title">Spend by tag</h2>
              <SkeletonRows rows={4} />
            </section>
          </>
        )}
      </div>
    </div>
  );
}
