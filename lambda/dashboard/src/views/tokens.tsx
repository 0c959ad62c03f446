import { Allowed } from '../caller';
import { useAction } from '../use-action';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { CopyButton } from '../components/copy-button';
import { ErrorMessage } from '../components/error-message';
import { SkeletonRows } from '../components/skeleton';
import type { CreatedToken } from '../types';
import { periodFromParams, periodRange, periodToParams, type Period } from '../period';
import { hrefFor } from '../router';
import { useAsync } from '../use-async';
import { RecentAlerts } from './budgets/recent-alerts';
import { RequesterBudgets } from './budgets/requester-budgets';
import { ModelPrices } from './budgets/model-prices';
import { DefaultFallbacks } from './default-fallbacks';
import { PeriodPicker } from './period-picker';
import { TokenTable } from './token-table';

function CreatedTokenNotice({ created, name, onDone }: { created: CreatedToken; name: string; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.token_id]);
  return (
    <section class="card created-token" data-testid="token-created" aria-labelledby="created-token-title">
      <h2 class="card-title" id="created-token-title" tabIndex={-1} ref={heading}>
        Token “{name}” created
      </h2>
      <p>
        <strong>Copy it now: it is shown only once.</strong> It can send proxy requests (scope <code>proxy</code>) but
        cannot open this dashboard.
      </p>
      <div class="secret-row">
        <code class="secret" data-testid="token-secret">
          {created.token}
        </code>
        <CopyButton text={created.token} label="Copy token" testId="token-copy" />
      </div>
      <button type="button" class="button button-small" data-testid="token-created-done" onClick={onDone}>
        Done, I saved it
      </button>
    </section>
  );
}

export function Tokens({ params }: { params: URLSearchParams }) {
  const api = useApi();
  const tokens = useAsync(() => api.tokens(), []);
  const period = periodFromParams(params);
  const periodKey = JSON.stringify(period);
  const stats = useAsync(() => {
    const { from, to } = periodRange(period);
    return api.stats(from, to);
  }, [periodKey]);
  const spend = useMemo(
    () => (stats.data ? new Map(stats.data.by_token.map((t) => [t.token_id, t])) : undefined),
    [stats.data],
  );
  const setPeriod = (next: Period) => {
    location.hash = hrefFor('tokens', periodToParams(next));
  };
  const [name, setName] = useState('');
  const { busy, error, setError, run } = useAction();
  const [created, setCreated] = useState<{ token: CreatedToken; name: string } | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setError(new Error('Give the token a name, for example the app that will use it.'));
      return;
    }
    await run(async () => {
      const token = await api.createToken(trimmed);
      setCreated({ token, name: trimmed });
      setName('');
      tokens.reload();
    });
  };

  const revoke = async (tokenId: string) => {
    await run(async () => {
      await api.revokeToken(tokenId);
      tokens.reload();
    }, false);
  };

  return (
    <div
      class="page"
      data-testid="page-tokens"
      data-state={tokens.loading ? 'loading' : tokens.error ? 'error' : 'ready'}
    >
      <div class="page-head">
        <h1 tabIndex={-1}>Tokens</h1>
      </div>
      <Allowed role="member">
        <section class="card">
          <h2 class="card-title">Create an app token</h2>
          <p class="muted token-intro">
            Give each app its own token so you can see its usage and revoke it alone. App tokens can send proxy requests
            only; they cannot sign in here.
          </p>
          <form class="inline-form" onSubmit={(event) => void create(event)}>
            <label for="token-name">Name</label>
            <div class="key-form-row">
              <input
                id="token-name"
                type="text"
                value={name}
                maxLength={200}
                autoComplete="off"
                placeholder="e.g. support-bot"
                data-testid="token-name"
                onInput={(e) => setName(e.currentTarget.value)}
              />
              <button type="submit" class="button button-primary" disabled={busy} data-testid="token-create">
                {busy ? 'Creating…' : 'Create token'}
              </button>
            </div>
          </form>
          <ErrorMessage error={error} testId="tokens-error" />
        </section>
      </Allowed>
      {created && <CreatedTokenNotice created={created.token} name={created.name} onDone={() => setCreated(null)} />}
      <ErrorMessage error={tokens.error} testId="tokens-load-error" onRetry={tokens.reload} />
      <section class="card table-card">
        <div class="card-head">
          <h2 class="card-title">All tokens</h2>
          <PeriodPicker period={period} onChange={setPeriod} />
        </div>
        <ErrorMessage error={stats.error} testId="tokens-spend-error" onRetry={stats.reload} />
        {tokens.data ? (
          <TokenTable
            tokens={tokens.data.tokens}
            onRevoke={revoke}
            onBudgetChanged={tokens.reload}
            spend={stats.loading && !stats.data ? undefined : (spend ?? new Map())}
          />
        ) : (
          <SkeletonRows rows={3} label="Loading tokens…" />
        )}
      </section>
      {/* Below the token list, shown once the list is in: the list growing must not push it down the screen. */}
      {tokens.data && <RequesterBudgets />}
      {tokens.data && <ModelPrices />}
      {tokens.data && <DefaultFallbacks />}
      {tokens.data && <RecentAlerts />}
    </div>
  );
}
