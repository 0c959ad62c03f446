/**
 * Every reported number is stored, or the row says why not (docs/usage-and-pricing.md). Before, an
 * upstream reporting `"prompt_tokens": 100000000000000000000` got the client its 200 but a row the
 * store refused ("greater than Number.MAX_SAFE_INTEGER"), which then waited in the spool forever:
 * no row, no spend, no stats. Now such a report is malformed: the row is written at once, with 0
 * tokens and cost 0, unpriced, and an `error` saying why; nothing is spooled.
 */
import { UNSTORABLE_USAGE } from '../../lambda/usage/build-row';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { rowOf } from './support/rows';

jest.setTimeout(300_000);

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

test.each([
  ['1e20 prompt tokens', 1e20],
  ['2^53 + 1 prompt tokens', Number('9007199254740993')],
])(
  'a provider reporting %s: the client gets its answer, the row is written and marked, nothing is spooled',
  async (_, tokens) => {
    const fake = proxy.fakes.fakes['prov-b'];
    fake.next({ usage: { inputTokens: tokens, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0 } });
    const answer = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, prompt: `${tokens}` });
    expect(answer.status).toBe(200);
    // The provider's body reached the client as sent, with the number as it was written.
    expect(answer.text).toMatch(new RegExp(`"prompt_tokens":\\s*${BigInt(tokens).toString().slice(0, 10)}`));

    const row = await rowOf(proxy, proxy.account.token, answer.requestId);
    expect(row).toMatchObject({
      status_code: 200,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      priced: false,
      error: UNSTORABLE_USAGE,
    });
    expect(proxy.output()).not.toContain('usage row spooled');
  },
);
