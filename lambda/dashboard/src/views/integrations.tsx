import { useEffect, useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { CopyButton } from '../components/copy-button';
import { ErrorMessage } from '../components/error-message';
import { PROVIDERS } from '../providers';
import { hrefFor } from '../router';
import { proxyBase } from '../snippets';
import type { StoredKey } from '../types';
import { useAsync } from '../use-async';
import { KeyCard } from './key-card';

export function Integrations() {
  const api = useApi();
  const keys = useAsync(() => api.keys(), []);
  // The card saves and replaces each provider's `default` key; the others of its pool are listed with their state.
  const [byProvider, setByProvider] = useState<Map<string, StoredKey>>(new Map());
  useEffect(() => {
    if (keys.data)
      setByProvider(new Map(keys.data.keys.filter((k) => k.label === 'default').map((k) => [k.provider, k])));
  }, [keys.data]);
  const known = keys.data !== undefined;
  const base = proxyBase();

  const onChanged = (provider: string, key: StoredKey | undefined) => {
    setByProvider((current) => {
      const next = new Map(current);
      if (key) next.set(provider, key);
      else next.delete(provider);
      return next;
    });
  };

  return (
    <div
      class="page"
      data-testid="page-integrations"
      data-state={keys.loading ? 'loading' : keys.error ? 'error' : 'ready'}
    >
      <div class="page-head">
        <h1 tabIndex={-1}>Integrations</h1>
      </div>
      <section class="card intro">
        <p>
          Save a provider's API key once: it is stored encrypted, sent to the provider only, and never shown again —
          this page shows just its last characters. Then point the provider's SDK at the proxy with a proxy token from{' '}
          <a href={hrefFor('tokens')}>Tokens</a>.
        </p>
        <div class="base-url">
          <span>Proxy base address</span>
          <code data-testid="proxy-base">{base}</code>
          <CopyButton text={base} testId="proxy-base-copy" />
        </div>
        <p class="muted">
          Optional headers on any request: <code>x-proxy-user</code> labels who asked, <code>x-proxy-cache: true</code>{' '}
          answers repeated identical requests from the cache,{' '}
          <code>x-proxy-tags: team=search, feature=autocomplete</code> tags it for spend by tag and tag budgets.
        </p>
      </section>
      <ErrorMessage error={keys.error} testId="keys-error" onRetry={keys.reload} />
      <div class="key-cards">
        {PROVIDERS.map((provider) => (
          <KeyCard
            key={provider.id}
            provider={provider}
            stored={byProvider.get(provider.id)}
            pool={keys.data?.keys.filter((k) => k.provider === provider.id) ?? []}
            known={known}
            signing={keys.data?.signing}
            onChanged={onChanged}
          />
        ))}
      </div>
    </div>
  );
}
