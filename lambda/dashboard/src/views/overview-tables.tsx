import type { ComponentChildren } from 'preact';
import { EmptyState } from '../components/empty-state';
import { formatCost, formatInt, formatUsd } from '../format';
import { providerName } from '../providers';
import { hrefFor } from '../router';
import type { Stats, Totals } from '../types';

const TOP = 10;

/** `other`: on the one entry of a breakdown that sums the values past the API's cut, how many it sums. */
type Ranked = Pick<Totals, 'cost_usd' | 'requests'> & { other?: number; past_daily_cap?: true };

function byCostThenRequests(a: Ranked, b: Ranked): number {
  return b.cost_usd - a.cost_usd || b.requests - a.requests;
}

interface Column<Row> {
  header: string;
  /** Extra classes of the header and the cells (`num`, `hide-narrow`…). */
  class?: string;
  cell: (row: Row) => ComponentChildren;
}

interface TopTableProps<Row extends Ranked> {
  id: string;
  title: string;
  /** Beside the title (a selector of what the table shows). */
  controls?: ComponentChildren;
  rows: Row[];
  /** What a row is, in the plural ("models"), for the line that says the list is cut. */
  noun: string;
  empty: ComponentChildren;
  columns: Column<Row>[];
  /** The row's key and its test attributes. */
  rowProps: (row: Row) => { key: string } & Record<string, string>;
}

/** The ten rows that cost most, in one card; every overview table is one of these. */
export function TopTable<Row extends Ranked>({
  id,
  title,
  controls,
  rows,
  noun,
  empty,
  columns,
  rowProps,
}: TopTableProps<Row>) {
  const top = [...rows].sort(byCostThenRequests).slice(0, TOP);
  // The API sums the values past its own cut into one entry; it still counts them.
  const distinct = rows.reduce((count, row) => count + (row.other ?? 1), 0);
  const hidden = distinct - top.reduce((count, row) => count + (row.other ?? 1), 0);
  // Values past a day's cap were summed without their names: how many there are is not known.
  const pastDailyCap = rows.some((row) => row.past_daily_cap);
  return (
    <section class="card table-card" data-testid={id}>
      {controls ? (
        <div class="card-head">
          <h2 class="card-title">{title}</h2>
          {controls}
        </div>
      ) : (
        <h2 class="card-title">{title}</h2>
      )}
      {top.length === 0 ? (
        empty
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table class="table">
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col" class={column.class} key={column.header}>
                    {column.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {top.map((row) => {
                const { key, ...attributes } = rowProps(row);
                return (
                  <tr key={key} {...attributes}>
                    {columns.map((column) => (
                      <td class={column.class ?? 'break'} key={column.header}>
                        {column.cell(row)}
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
          {(hidden > 0 || pastDailyCap) && (
            <p class="table-cut" data-testid={`${id}-cut`}>
              {pastDailyCap
                ? `${formatInt(top.length)} of more than ${formatInt(distinct)} ${noun} shown: the others are in the totals, not listed.`
                : `${formatInt(top.length)} of ${formatInt(distinct)} ${noun} shown: the other ${formatInt(hidden)} ${hidden === 1 ? 'is' : 'are'} in the totals, not listed.`}
            </p>
          )}
        </div>
      )}
    </section>
  );
}

type Row<K extends 'by_model' | 'by_requester' | 'by_token'> = Stats[K][number];

const requests = <R extends Totals>(): Column<R> => ({
  header: 'Requests',
  class: 'num',
  cell: (row) => formatInt(row.requests),
});
const cost = <R extends Totals>(): Column<R> => ({ header: 'Cost', class: 'num', cell: (row) => formatCost(row) });

/** What the shared columns below read: every table's rows have it, tag values' included. */
type Summed = Pick<Totals, 'input_tokens' | 'output_tokens' | 'cost_usd' | 'savings_usd' | 'unpriced_requests'>;

/** Tokens in and out, hidden on a phone. */
export const tokensInOut = <R extends Summed>(): Column<R> => ({
  header: 'Tokens in / out',
  class: 'num hide-narrow',
  cell: (row) => `${formatInt(row.input_tokens)} / ${formatInt(row.output_tokens)}`,
});

/** The cost, with what the cache saved under it when it saved anything. */
export const costWithSavings = <R extends Summed>(savedTestId?: string): Column<R> => ({
  header: 'Cost',
  class: 'num',
  cell: (row) => (
    <>
      {formatCost(row)}
      {row.savings_usd > 0 && (
        <span class="sub saved" data-testid={savedTestId}>
          saved {formatUsd(row.savings_usd)}
        </span>
      )}
    </>
  ),
});

/**
 * The entry that sums the values past the API's cut: no link, since no one value is behind it.
 * Values past a day's cap were never counted by name, so then the count is only a lower bound.
 */
export function OtherValues({ count, noun, pastDailyCap }: { count: number; noun: string; pastDailyCap?: boolean }) {
  if (!pastDailyCap)
    return (
      <span class="muted" data-testid="other-values">
        {formatInt(count)} other {noun}
      </span>
    );
  return (
    <span class="muted" data-testid="other-values" title={`Past the day's cap, ${noun} are summed without their names`}>
      {count > 0 ? `${formatInt(count)}+ other ${noun}` : `Other ${noun}`} (past the daily cap)
    </span>
  );
}

export function TopModels({ stats }: { stats: Stats }) {
  return (
    <TopTable<Row<'by_model'>>
      id="top-models"
      title="Top models"
      rows={stats.by_model}
      noun="models"
      empty={<EmptyState title="No models used in this period." />}
      rowProps={(row) => ({
        key: `${row.provider}/${row.model}`,
        'data-testid': 'top-model-row',
        'data-model': row.model,
      })}
      columns={[
        {
          header: 'Model',
          cell: (row) =>
            row.other !== undefined ? (
              <OtherValues count={row.other} noun="models" pastDailyCap={row.past_daily_cap} />
            ) : (
              <>
                <a href={hrefFor('logs', { model: row.model })} class="mono">
                  {row.model}
                </a>
                <span class="sub">{providerName(row.provider)}</span>
              </>
            ),
        },
        requests(),
        tokensInOut(),
        cost(),
      ]}
    />
  );
}

export function TopRequesters({ stats }: { stats: Stats }) {
  return (
    <TopTable<Row<'by_requester'>>
      id="top-requesters"
      title="Top requesters"
      rows={stats.by_requester}
      noun="requesters"
      empty={
        <EmptyState title="No requests in this period.">
          Send an <code>x-proxy-user</code> header with each request to see who uses what.
        </EmptyState>
      }
      rowProps={(row) => ({ key: row.requester, 'data-testid': 'top-requester-row', 'data-requester': row.requester })}
      columns={[
        {
          header: 'Requester',
          cell: (row) =>
            row.other !== undefined ? (
              <OtherValues count={row.other} noun="requesters" pastDailyCap={row.past_daily_cap} />
            ) : row.requester === '' ? (
              <span class="muted">(none)</span>
            ) : (
              <a href={hrefFor('logs', { requester: row.requester })}>{row.requester}</a>
            ),
        },
        requests(),
        costWithSavings(),
      ]}
    />
  );
}

/** Spend per proxy token: with one token per app, this is spend per app. */
export function TopTokens({ stats }: { stats: Stats }) {
  return (
    <TopTable<Row<'by_token'>>
      id="top-tokens"
      title="Top tokens"
      rows={stats.by_token}
      noun="tokens"
      empty={
        <EmptyState title="No requests in this period.">
          Give each app its own token on <a href={hrefFor('tokens')}>Tokens</a> to see what each one spends.
        </EmptyState>
      }
      rowProps={(row) => ({ key: row.token_id, 'data-testid': 'top-token-row', 'data-token-id': row.token_id })}
      columns={[
        {
          header: 'Token',
          cell: (row) =>
            row.token_id === '' ? (
              <span class="muted">(before tokens were counted)</span>
            ) : (
              <a href={hrefFor('logs', { token_id: row.token_id })}>
                {row.name ||
                  (row.name === undefined ? (
                    <span class="muted">deleted token</span>
                  ) : (
                    <span class="muted">(unnamed)</span>
                  ))}
              </a>
            ),
        },
        requests(),
        cost(),
      ]}
    />
  );
}
