import { EmptyState } from '../components/empty-state';
import { formatCost, formatInt, formatUsd } from '../format';
import { providerName } from '../providers';
import { hrefFor } from '../router';
import type { Stats, Totals } from '../types';

const TOP = 10;

function byCostThenRequests(a: Totals, b: Totals): number {
  return b.cost_usd - a.cost_usd || b.requests - a.requests;
}

export function TopModels({ stats }: { stats: Stats }) {
  const rows = [...stats.by_model].sort(byCostThenRequests).slice(0, TOP);
  return (
    <section class="card table-card" data-testid="top-models">
      <h2 class="card-title">Top models</h2>
      {rows.length === 0 ? (
        <EmptyState title="No models used in this period." />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Top models">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num hide-narrow">Tokens in / out</th>
                <th scope="col" class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={`${row.provider}/${row.model}`} data-testid="top-model-row" data-model={row.model}>
                  <td class="break">
                    <a href={hrefFor('logs', { model: row.model })} class="mono">
                      {row.model}
                    </a>
                    <span class="sub">{providerName(row.provider)}</span>
                  </td>
                  <td class="num">{formatInt(row.requests)}</td>
                  <td class="num hide-narrow">
                    {formatInt(row.input_tokens)} / {formatInt(row.output_tokens)}
                  </td>
                  <td class="num">{formatCost(row)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function TopRequesters({ stats }: { stats: Stats }) {
  const rows = [...stats.by_requester].sort(byCostThenRequests).slice(0, TOP);
  return (
    <section class="card table-card" data-testid="top-requesters">
      <h2 class="card-title">Top requesters</h2>
      {rows.length === 0 ? (
        <EmptyState title="No requests in this period.">
          Send an <code>x-proxy-user</code> header with each request to see who uses what.
        </EmptyState>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Top requesters">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Requester</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.requester} data-testid="top-requester-row" data-requester={row.requester}>
                  <td class="break">
                    {row.requester === '' ? (
                      <span class="muted">(none)</span>
                    ) : (
                      <a href={hrefFor('logs', { requester: row.requester })}>{row.requester}</a>
                    )}
                  </td>
                  <td class="num">{formatInt(row.requests)}</td>
                  <td class="num">
                    {formatCost(row)}
                    {row.savings_usd > 0 && <span class="sub saved">saved {formatUsd(row.savings_usd)}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Spend per proxy token: with one token per app, this is spend per app. */
export function TopTokens({ stats }: { stats: Stats }) {
  const rows = [...stats.by_token].sort(byCostThenRequests).slice(0, TOP);
  return (
    <section class="card table-card" data-testid="top-tokens">
      <h2 class="card-title">Top tokens</h2>
      {rows.length === 0 ? (
        <EmptyState title="No requests in this period.">
          Give each app its own token on <a href={hrefFor('tokens')}>Tokens</a> to see what each one spends.
        </EmptyState>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Top tokens">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.token_id} data-testid="top-token-row" data-token-id={row.token_id}>
                  <td class="break">
                    {row.token_id === '' ? (
                      <span class="muted">(before tokens were counted)</span>
                    ) : (
                      <a href={hrefFor('logs', { token_id: row.token_id })}>
                        {row.name || (row.name === undefined ? <span class="muted">deleted token</span> : <span class="muted">(unnamed)</span>)}
                      </a>
                    )}
                  </td>
                  <td class="num">{formatInt(row.requests)}</td>
                  <td class="num">{formatCost(row)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
