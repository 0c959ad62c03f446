/**
 * Identical cached requests to a provider that never answers: the first calls it, the others wait
 * for it, and when the provider's time limit passes they all get its 504, without calling the
 * provider again. Before, each waiting request waited a whole limit from its own arrival, then
 * called the provider itself and waited a second limit (five requests: a 504 at 30 s, four at
 * 59–60 s, five upstream calls).
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/** Long enough for the waiting requests to join on a loaded machine; the test takes about this long. */
const TIME_LIMIT_MS = 8_000;

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: String(TIME_LIMIT_MS) } });
});
afterAll(async () => {
  await proxy?.stop();
});

it('five identical cached requests to a hanging provider: one upstream call, five 504s, five rows', async () => {
  const fake = proxy.fakes.fakes['prov-b'];
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-cache': 'true' },
  });
  const messages = [{ role: 'user' as const, content: `hanging ${randomBytes(6).toString('hex')}` }];
  const send = () =>
    client.chat.completions.create({ model: 'gpt-4o-mini', messages }).then(
      () => {
        throw new Error('expected a 504');
      },
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
  fake.always({ hang: true });
  try {
    const before = fake.requests.length;
    const leader = send();
    // The others arrive once the first is waiting on the provider.
    await fake.waitForRequests(before + 1);
    const errors = await Promise.all([leader, ...Array.from({ length: 4 }, send)]);
    expect(errors.map((e) => e.status)).toEqual(Array(5).fill(504));
    for (const error of errors)
      expect(error.message).toContain(`did not respond within ${TIME_LIMIT_MS / 1000} seconds`);
    expect(fake.requests.length).toBe(before + 1);
    const ids = errors.map((e) => e.headers!.get('x-proxy-request-id')!);
    const rows = await proxy.rowsFor(proxy.account.token, ids);
    expect(rows.map((r) => r.status_code)).toEqual(Array(5).fill(504));
  } finally {
    fake.always(undefined);
  }
});
