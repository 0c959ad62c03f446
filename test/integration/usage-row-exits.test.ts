/**
 * One row per request, whichever way it ends (docs/behaviour.md, "Processing order", step 11): each
 * way out of the proxy that leaves a row leaves exactly one, with what the client was told, and the
 * ways that leave none (a malformed request) leave none. pipeline.ts writes every one of them.
 */
import { callProxy, credentialHeaders, ENDPOINT, requestBody, upstreamCalls } from '../reliability/support/requests';
import { allRows } from '../reliability/support/rows';
import { eventually } from '../support/patience';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
let account: Account;
beforeAll(async () => {
  proxy = await startProxy();
  account = await proxy.createAccount('row-exits');
  await proxy.saveKey(account.token, 'prov-b');
});
afterAll(async () => {
  await proxy.stop();
});

/** Every request id that should have its one row, with what it should say. */
const expected = new Map<string, Record<string, unknown>>();

async function rowOf(requestId: string): Promise<Record<string, unknown>> {
  const [row] = await proxy.rowsFor(account.token, [requestId]);
  return row;
}

async function put(path: string, body: unknown): Promise<void> {
  const response = await proxy.api(path, { method: 'PUT', token: account.token, body });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
}

describe('a row for every way out', () => {
  it('forwarded JSON', async () => {
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(answer.status).toBe(200);
    const row = { status_code: 200, stream: false, cached: false };
    const stored = await rowOf(answer.requestId);
    expect(stored).toMatchObject(row);
    expect(stored.error).toBeUndefined();
    expected.set(answer.requestId, row);
  });

  it('forwarded stream', async () => {
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token, stream: true });
    expect(answer.status).toBe(200);
    const row = { status_code: 200, stream: true, cached: false };
    expect(await rowOf(answer.requestId)).toMatchObject(row);
    expected.set(answer.requestId, row);
  });

  it('an error answer of the provider, passed through', async () => {
    // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-b'].next({ status: 500, errorMessage: 'the provider broke' });
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(answer.status).toBe(500);
    const row = { status_code: 500, error: 'the provider broke', input_tokens: 0 };
    expect(await rowOf(answer.requestId)).toMatchObject(row);
    expected.set(answer.requestId, row);
  });

  it('a provider call that fails before any answer', async () => {
    // Every attempt: the proxy sends a request again once when a kept-alive socket was reset before any answer.
    proxy.fakes.fakes['prov-b'].always({ resetBeforeHeaders: true });
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    proxy.fakes.fakes['prov-b'].always(undefined);
    expect(answer.status).toBe(502);
    const row = { status_code: 502, error: 'The upstream provider could not be reached.' };
    expect(await rowOf(answer.requestId)).toMatchObject(row);
    expected.set(answer.requestId, row);
  });

  it('a cache hit, once its body has gone out', async () => {
    const miss = await callProxy(proxy, { provider: 'prov-b', token: account.token, cache: 'true', prompt: 'cached' });
    const hit = await callProxy(proxy, { provider: 'prov-b', token: account.token, cache: 'true', prompt: 'cached' });
    expect(hit.headers.get('x-proxy-cache')).toBe('HIT');
    expect(await rowOf(miss.requestId)).toMatchObject({ cached: false });
    expect(await rowOf(hit.requestId)).toMatchObject({ status_code: 200, cached: true, input_tokens: 0 });
    expected.set(miss.requestId, { cached: false });
    expected.set(hit.requestId, { cached: true });
  });

  it('a client that leaves before the provider answers', async () => {
    proxy.fakes.fakes['prov-b'].next({ hang: true });
    const before = upstreamCalls(proxy);
    const controller = new AbortController();
    const leaving = fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', account.token) },
      body: JSON.stringify(requestBody('prov-b', 'leaving')),
      signal: controller.signal,
    }).catch(() => undefined);
    await eventually(async () => (upstreamCalls(proxy) > before ? true : undefined));
    controller.abort();
    await leaving;
    const row = await eventually(async () =>
      (await allRows(proxy, account.token)).find((r) => r.error === 'client disconnected'),
    );
    expect(row).toMatchObject({ status_code: 499, error: 'client disconnected' });
    expected.set(row!.id as string, { error: 'client disconnected' });
  });

  it('refused by the token’s model list', async () => {
    await put(`/api/tokens/${account.tokenId}/limits`, { models: ['gpt-4.1-mini'] });
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(answer.status).toBe(403);
    const row = { status_code: 403, error: expect.stringContaining('may not use model') };
    expect(await rowOf(answer.requestId)).toMatchObject(row);
    expected.set(answer.requestId, row);
    await put(`/api/tokens/${account.tokenId}/limits`, { models: null });
  });

  it('refused by a used-up budget; none for a malformed request sent before it', async () => {
    const malformed = await callProxy(proxy, { provider: 'prov-b', token: account.token, body: { messages: [] } });
    expect(malformed.status).toBe(400);
    await put(`/api/tokens/${account.tokenId}/budget`, { limit_usd: 0.000001, period: 'total' });
    // Spend is folded from the usage stream (docs/budgets.md): wait until the earlier rows are counted.
    await eventually(async () => {
      const body = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
        tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
      };
      const budget = body.tokens.find((t) => t.token_id === account.tokenId)?.budget;
      return budget && budget.spent_usd >= 0.000001 ? budget : undefined;
    });
    const answer = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(answer.status).toBe(402);
    const row = { status_code: 402, error: expect.any(String) };
    expect(await rowOf(answer.requestId)).toMatchObject(row);
    expected.set(answer.requestId, row);
  });

  it('exactly one row for each of them, and none other', async () => {
    // The malformed request was answered before the budget refusal, whose row is read back: had it
    // left a row, that row would be in the log by now, as every earlier answer's is.
    const rows = await allRows(proxy, account.token);
    expect(rows.map((row) => row.id).sort()).toEqual([...expected.keys()].sort());
    for (const row of rows) expect(row).toMatchObject(expected.get(row.id as string)!);
  });
});
