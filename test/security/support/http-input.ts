/**
 * What the HTTP-level bad-input tests share: one local server per file (its rate limit out of the
 * way), and how they send to it and check that nothing reached the provider.
 */
import type { ProviderId } from '../../fakes/start-fakes';
import { ENDPOINT, upstreamCalls } from '../../reliability/support/requests';
import { startProxy, type ProxyServer } from '../../support/proxy-server';
import { validBody } from './validity';

export const MB = 1024 * 1024;

export let proxy: ProxyServer;
export let token: string;

/** Starts the file's server before its tests and stops it after them; fails if it ever answered 500. */
export function useHttpInputProxy(): void {
  beforeAll(async () => {
    proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
    token = proxy.account.token;
  });
  afterAll(async () => {
    await proxy?.stop();
  });
}

export const path = (id: ProviderId) => `/api/proxy${ENDPOINT[id]}`;
export const credentialLines = (id: ProviderId, credential = token) =>
  id === 'prov-a'
    ? [`x-api-key: ${credential}`, 'anthropic-version: 2023-06-01']
    : [`authorization: Bearer ${credential}`];

export async function post(
  id: ProviderId,
  headers: Record<string, string>,
  body: string | Buffer = JSON.stringify(validBody(id)),
) {
  const response = await fetch(proxy.proxyBase + ENDPOINT[id], {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Runs a request and checks that the provider was not called. */
export async function notForwarded<T>(run: () => Promise<T>): Promise<T> {
  const before = upstreamCalls(proxy);
  const result = await run();
  expect(upstreamCalls(proxy)).toBe(before);
  return result;
}
