import { useActor, useAllowed } from '../caller';
import { useApi } from '../api-context';
import { ConfirmButton } from '../components/confirm-button';
import { formatCost, formatDateTime, formatInt } from '../format';
import type { TokenInfo, TokenTotals } from '../types';
import { BudgetEditor } from './budgets/budget-editor';
import { TokenSettings } from './token-settings';

function newestActiveFirst(a: TokenInfo, b: TokenInfo): number {
  if (!a.revoked_at !== !b.revoked_at) return a.revoked_at ? 1 : -1;
  return b.created_at.localeCompare(a.created_at);
}

/** The token's budget bar with set / change / remove; a revoked token keeps only its bar. */
function TokenBudget({ token, onChanged }: { token: TokenInfo; onChanged: () => void }) {
  const api = useApi();
  if (token.revoked_at) return token.budget ? <span class="muted">—</span> : null;
  return (
    <BudgetEditor
      budget={token.budget}
      label={`token “${token.name || token.token_id}”`}
      testId="token-budget"
      onSave={async (input) => {
        await api.setTokenBudget(token.token_id, input);
        onChanged();
      }}
      onRemove={async () => {
        await api.removeTokenBudget(token.token_id);
        onChanged();
      }}
    />
  );
}

interface Props {
  tokens: TokenInfo[];
  onRevoke: (tokenId: string) => Promise<void>;
  onBudgetChanged: () => void;
  /** Each token's usage in the chosen period; undefined while it loads. */
  spend: Map<string, TokenTotals> | undefined;
}

/** Always two lines, loading or not, so the rows keep their height when the figures arrive. */
function Spend({ usage, loaded }: { usage: TokenTotals | undefined; loaded: boolean }) {
  const used = usage && usage.requests > 0 ? usage : undefined;
  return (
    <span class="stack">
      <span data-testid="token-spend-value" data-value={used?.cost_usd ?? 0} class={used ? '' : 'muted'}>
        {!loaded ? '…' : used ? formatCost(used) : 'no requests'}
      </span>
      <span class="sub">
        {used ? `${formatInt(used.requests)} ${used.requests === 1 ? 'request' : 'requests'}` : '\u00a0'}
      </span>
    </span>
  );
}

export function TokenTable({ tokens, onRevoke, onBudgetChanged, spend }: Props) {
  const rows = [...tokens].sort(newestActiveFirst);
  // An admin changes any token; a member only those it issued (docs/people.md).
  const admin = useAllowed('admin');
  const member = useAllowed('member');
  const actor = useActor();
  const mayChange = (token: TokenInfo) => admin || (member && token.created_by === actor);
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label="Tokens">
      <table class="table token-table" data-testid="tokens-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col" class="num">
              Spend
            </th>
            <th scope="col">Budget</th>
            <th scope="col">Tags &amp; limits</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((token) => (
            <tr
              key={token.token_id}
              data-testid="token-row"
              data-token-id={token.token_id}
              data-revoked={String(Boolean(token.revoked_at))}
              class={token.revoked_at ? 'is-revoked' : ''}
            >
              <td data-label="Name" class="break">
                {token.name || <span class="muted">(unnamed)</span>}
                {token.current && (
                  <span class="badge" data-testid="token-current">
                    this session
                  </span>
                )}
              </td>
              <td data-label="Scopes">
                {token.scopes.map((scope) => (
                  <span key={scope} class="badge">
                    {scope}
                  </span>
                ))}
              </td>
              <td data-label="Created">{formatDateTime(token.created_at)}</td>
              <td data-label="Last used">
                {token.last_used_at ? formatDateTime(token.last_used_at) : <span class="muted">never</span>}
              </td>
              <td data-label="Spend" class="num spend-cell" data-testid="token-spend">
                <Spend usage={spend?.get(token.token_id)} loaded={spend !== undefined} />
              </td>
              <td data-label="Budget">
                <TokenBudget token={token} onChanged={onBudgetChanged} />
              </td>
              <td data-label="Tags & limits" class="token-settings">
                {mayChange(token) && <TokenSettings token={token} onChanged={onBudgetChanged} />}
              </td>
              <td data-label="Status">
                {token.revoked_at ? (
                  <span class="muted" data-testid="token-revoked">
                    Revoked {formatDateTime(token.revoked_at)}
                  </span>
                ) : (
                  mayChange(token) && (
                    <ConfirmButton
                      label="Revoke"
                      confirmLabel="Revoke now"
                      question={
                        token.current
                          ? 'You are signed in with this token: revoking it signs you out.'
                          : 'Apps using it stop working at once.'
                      }
                      testId="token-revoke"
                      onConfirm={() => onRevoke(token.token_id)}
                    />
                  )
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
