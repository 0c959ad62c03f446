/** Requests sent through the real proxy before the browser looks at the dashboard. */
import type { ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';

export interface SentTraffic {
  /** Row id of the request answered from the cache. */
  cacheHitId: string;
  errorMessage: string;
  /** Rows the traffic wrote. */
  rows: number;
}

export const PROVIDER_ERROR = 'Rate limit reached for requests per minute (fake upstream)';

/**
 * A small, varied history: three providers, two requesters and one without, a stream,
 * a provider error with its message, and a cache miss followed by a hit.
 */
export async function sendTraffic(proxy: ProxyServer, token: string): Promise<SentTraffic> {
  const base = { proxyBase: proxy.proxyBase, token };
  await callThroughSdk({ ...base, provider: 'prov-b', stream: false, headers: { 'x-proxy-user': 'alice' } });
  await callThroughSdk({
    ...base,
    provider: 'prov-b',
    stream: true,
    headers: { 'x-proxy-user': 'alice' },
    messages: [{ role: 'user', content: 'Count to three.' }],
  });
  await callThroughSdk({ ...base, provider: 'prov-a', stream: true, headers: { 'x-proxy-user': 'bob' } });
  await callThroughSdk({ ...base, provider: 'prov-c', stream: false });

  // The proxy retries a 429 up to three attempts (docs/fallbacks.md): the provider throttles all three.
  for (let attempt = 0; attempt < 3; attempt++)
    proxy.fakes.fakes['prov-e'].next({ status: 429, errorMessage: PROVIDER_ERROR });
  await callThroughSdk({ ...base, provider: 'prov-e', stream: false, headers: { 'x-proxy-user': 'bob' } }).then(
    () => {
      throw new Error('the scripted provider error did not reach the client');
    },
    () => undefined,
  );

  const cached = {
    ...base,
    provider: 'prov-d' as const,
    stream: false,
    headers: { 'x-proxy-cache': 'true', 'x-proxy-user': 'carol' },
  };
  const miss = await callThroughSdk(cached);
  if (miss.headers.get('x-proxy-cache') !== 'MISS')
    throw new Error(`expected a cache MISS, got ${miss.headers.get('x-proxy-cache')}`);
  const hit = await callThroughSdk(cached);
  if (hit.headers.get('x-proxy-cache') !== 'HIT')
    throw new Error(`expected a cache HIT, got ${hit.headers.get('x-proxy-cache')}`);

  const rows = 7;
  await proxy.waitForRows(token, rows);
  return { cacheHitId: hit.requestId, errorMessage: PROVIDER_ERROR, rows };
}
