import { useState } from 'preact/hooks';
import { EmptyState } from '../components/empty-state';
import { formatInt } from '../format';
import { hrefFor } from '../router';
import type { Stats, TagTotals } from '../types';
import { costWithSavings, OtherValues, TopTable, tokensInOut } from './overview-tables';

/** The stats' name for the value that sums the values past the listed ones and past a key's daily cap (docs/tags.md). */
const OTHER_VALUE = '(other)';

type TagRow = TagTotals & { value: string };

/** Spend per value of one tag key (`team`: search, ads…), the key chosen beside the title. */
export function SpendByTag({ stats }: { stats: Stats }) {
  const keys = Object.keys(stats.by_tag).sort();
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const key = chosen !== undefined && keys.includes(chosen) ? chosen : keys[0];
  const rows: TagRow[] =
    key === undefined ? [] : Object.entries(stats.by_tag[key] ?? {}).map(([value, totals]) => ({ ...totals, value }));
  const selector =
    keys.length > 0 ? (
      <label class="spend-by-tag-key">
        <span>Tag key</span>
        <select value={key} data-testid="spend-by-tag-key" onChange={(e) => setChosen(e.currentTarget.value)}>
          {keys.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        {stats.tag_keys_not_listed ? (
          <span class="muted" data-testid="spend-by-tag-keys-not-listed">
            {formatInt(stats.tag_keys_not_listed)} cheaper keys not listed
          </span>
        ) : null}
      </label>
    ) : undefined;
  return (
    <TopTable<TagRow>
      id="spend-by-tag"
      title="Spend by tag"
      controls={selector}
      rows={rows}
      noun="values"
      empty={
        <EmptyState title="No tagged requests in this period." testId="spend-by-tag-empty">
          Send <code>x-proxy-tags: team=search</code> with a request, or give a token tags on{' '}
          <a href={hrefFor('tokens')}>Tokens</a>, to see spend per team or feature.
        </EmptyState>
      }
      rowProps={(row) => ({
        key: row.value,
        'data-testid': 'spend-by-tag-row',
        'data-value': row.value,
        // The exact figures behind the rounded text, for checks against the rows.
        'data-requests': String(row.requests),
        'data-input-tokens': String(row.input_tokens),
        'data-output-tokens': String(row.output_tokens),
        'data-cost-nanos': String(row.cost_nanos),
        'data-saved-nanos': String(row.saved_nanos),
      })}
      columns={[
        {
          header: 'Value',
          cell: (row) =>
            row.value === OTHER_VALUE ? (
              <OtherValues count={row.other ?? 0} noun="values" pastDailyCap={row.past_daily_cap} />
            ) : (
              <a href={hrefFor('logs', new URLSearchParams([['tag', `${key}=${row.value}`]]))} class="mono">
                {row.value}
              </a>
            ),
        },
        {
          header: 'Requests',
          class: 'num',
          cell: (row) => (
            <>
              {formatInt(row.requests)}
              {/* A phone has no room for the tokens column: they go under the requests. */}
              <span class="sub show-narrow" data-testid="spend-by-tag-tokens-narrow">
                {formatInt(row.input_tokens)} in / {formatInt(row.output_tokens)} out
              </span>
            </>
          ),
        },
        tokensInOut(),
        costWithSavings('spend-by-tag-saved'),
      ]}
    />
  );
}
