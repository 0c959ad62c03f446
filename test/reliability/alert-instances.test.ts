/**
 * Budget alerts across two server processes on one DynamoDB, each folding the usage stream itself
 * (as two consumers would): a budget with `alert_at: [0.5, 1]` driven past its limit by concurrent
 * requests through both sends exactly one signed webhook alert per fraction, retried after a failed
 * attempt, and no alert carries a token or a key (docs/alerts.md).
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { eventually } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { runPool } from './support/pool';
import { callProxy } from './support/requests';
import { waitForRowCount } from './support/rows';

jest.setTimeout(300_000);

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;
let receiver: Server;
let receiverUrl: string;
const deliveries: Delivery[] = [];
/** The receiver answers 503 to the first post of each threshold, so every alert needs a retry. */
const refusedOnce = new Set<number>();
const ownKey = 'client-own-key-for-alert-instances-01';

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += String(chunk)));
    request.on('end', () => {
      const threshold = (JSON.parse(body) as { threshold: number }).threshold;
      if (!refusedOnce.has(threshold)) {
        refusedOnce.add(threshold);
        response.writeHead(503).end();
        return;
      }
      deliveries.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/budget`;
  fakes = await startAllFakes();
  const tablePrefix = `alr${Date.now().toString(36)}-`;
  // Local use and tests only: the webhook is a plain http server on this machine.
  const env = { RATE_LIMIT_PER_MINUTE: '100000', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true', ALERT_RETRY_FIRST_SECONDS: '1' };
  first = await startProxy({ fakes, tablePrefix, env });
  second = await startProxy({ fakes, tablePrefix, env, sharesKeysWith: first });
  for (const proxy of [first, second]) proxy.secrets.add(ownKey);
});

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await fakes?.close();
  await new Promise((done) => receiver?.close(done));
});

test('the webhook API: set (secret shown once), shown masked, removed; bad URLs and alert_at refused with a 400', async () => {
  const account = await first.createAccount('webhook-api');
  const set = await first.api('/api/alerts/webhook', {
    method: 'PUT',
    token: account.token,
    body: { url: 'https://hooks.example.com/services/T000/B000/abcdefgh' },
  });
  expect(set.status).toBe(200);
  const { secret } = (await set.json()) as { secret: string };
  first.secrets.add(secret);
  expect(secret.length).toBeGreaterThanOrEqual(40);
  const shown = (await (await second.api('/api/alerts/webhook', { token: account.token })).json()) as Record<
    string,
    string
  >;
  expect(shown.url).toBe('https://hooks.example.com/…efgh');
  expect(shown.secret).toBe(`whsec_…${secret.slice(-4)}`);
  expect(JSON.stringify(shown)).not.toContain(secret);
  expect((await first.api('/api/alerts/webhook', { method: 'DELETE', token: account.token })).status).toBe(204);
  expect((await first.api('/api/alerts/webhook', { token: account.token })).status).toBe(404);
  expect((await first.api('/api/alerts/webhook', { method: 'DELETE', token: account.token })).status).toBe(404);

  for (const body of [{ url: 'ftp://x.example.com' }, { url: 42 }, { url: 'https://x.example.com', extra: 1 }]) {
    const refused = await first.api('/api/alerts/webhook', { method: 'PUT', token: account.token, body });
    expect(refused.status).toBe(400);
  }
  for (const alertAt of [[0], [1.5], ['half'], 0.5, Array.from({ length: 11 }, (_, i) => (i + 1) / 11)]) {
    const refused = await first.api(`/api/tokens/${account.tokenId}/budget`, {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 5, period: 'day', alert_at: alertAt },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('alert_at');
  }
  // Without alert_at a budget alerts at 80 % and 100 %.
  const plain = await first.api('/api/budgets/tags/team/search', {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 5, period: 'day' },
  });
  expect(((await plain.json()) as { alert_at: number[] }).alert_at).toEqual([0.8, 1]);
  // Another account sees neither this account's webhook nor its alerts.
  const other = await first.createAccount('webhook-api-other');
  expect((await first.api('/api/alerts', { token: other.token })).status).toBe(200);
  expect(((await (await first.api('/api/alerts', { token: other.token })).json()) as { alerts: [] }).alerts).toEqual(
    [],
  );
});

test('alert_at [0.5, 1] past the limit over two instances: one signed webhook alert per fraction, no credential in any', async () => {
  const account = await first.createAccount('alerts');
  second.secrets.add(account.token);
  const webhook = await first.api('/api/alerts/webhook', {
    method: 'PUT',
    token: account.token,
    body: { url: receiverUrl },
  });
  expect(webhook.status).toBe(200);
  const { secret } = (await webhook.json()) as { secret: string };
  first.secrets.add(secret);
  second.secrets.add(secret);

  // One request's cost, then a budget of about ten of them.
  const probe = await callProxy(first, { provider: 'prov-b', token: account.token, providerKey: ownKey });
  expect(probe.status).toBe(200);
  const [probeRow] = await waitForRowCount(first, account.token, 1);
  const cost = probeRow.cost_nanos as number;
  expect(cost).toBeGreaterThan(0);
  const limitUsd = (Math.ceil((cost * 10) / 1000) * 1000) / 1e9;
  const put = await first.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: limitUsd, period: 'month', alert_at: [1, 0.5] },
  });
  expect(put.status).toBe(200);
  expect(((await put.json()) as { alert_at: number[] }).alert_at).toEqual([0.5, 1]);

  const results = await runPool(60, 12, (index) =>
    callProxy(index % 2 ? second : first, {
      provider: 'prov-b',
      token: account.token,
      providerKey: ownKey,
      prompt: `alert ${index}`,
      stream: index % 3 === 0,
    }),
  );
  expect(results.every((r) => r.status === 200 || r.status === 402)).toBe(true);
  // Spend is folded from the usage stream (docs/budgets.md, "Overshoot"): once it is, the next request is refused.
  await eventually(async () => {
    const body = (await (await first.api('/api/tokens', { token: account.token })).json()) as {
      tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
    };
    const budget = body.tokens.find((t) => t.token_id === account.tokenId)?.budget;
    return budget && budget.spent_usd >= limitUsd ? budget : undefined;
  });
  const refused = await callProxy(second, { provider: 'prov-b', token: account.token, providerKey: ownKey });
  expect(refused.status).toBe(402);

  // Both alerts arrive, each after one refused attempt.
  const sent = await eventually(async () => {
    const body = (await (await second.api('/api/alerts', { token: account.token })).json()) as {
      alerts: Array<{ threshold: number; state: string; deliveries: Array<{ delivered: boolean; attempts: number }> }>;
    };
    const done = body.alerts.filter((alert) => alert.state === 'delivered');
    return done.length === 2 ? body.alerts : undefined;
  });
  expect(sent?.map((alert) => alert.threshold).sort()).toEqual([0.5, 1]);
  for (const alert of sent!) expect(alert.deliveries).toEqual([{ target: 'webhook', delivered: true, attempts: 2 }]);

  // Each instance's stream reader finishes what it read when it stops: only then is "no more alerts" final.
  await first.stop();
  await second.stop();
  const received = deliveries.map(({ headers, body }) => ({
    headers,
    payload: JSON.parse(body) as Record<string, unknown>,
  }));
  expect(received.map(({ payload }) => payload.threshold).sort()).toEqual([0.5, 1]);
  for (const { headers, body } of deliveries) {
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers['x-proxy-signature']))!;
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
    const everything = JSON.stringify(headers) + body;
    for (const credential of [account.token, ownKey, secret, first.adminKey, ...Object.values(first.storedKeys)])
      expect(everything).not.toContain(credential);
  }
  for (const { payload } of received) {
    expect(payload).toMatchObject({
      type: 'budget.threshold',
      account_id: account.accountId,
      subject: { kind: 'token', token_id: account.tokenId },
      limit_usd: limitUsd,
      period: 'month',
    });
    expect(payload.spent_usd as number).toBeGreaterThanOrEqual((payload.threshold as number) * limitUsd);
    expect(payload.period_start).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    // The text names a token by its name, never its id.
    expect(payload.text).toContain('proxy token');
    expect(payload.text).not.toContain(account.tokenId);
    expect(payload.id).toMatch(/^alr_/);
    expect(payload.text).toContain(`${(payload.threshold as number) * 100}%`);
  }
});
