import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * The body reaches the provider as the client wrote it. Where the proxy must ask
 * for stream usage, the one added field is spliced into the text: numbers keep
 * their literal form (2^53 + 1 stays odd, `1.0` stays `1.0`), and so does everything else.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const body = (stream: boolean) =>
  `{"model": "gpt-4o-mini",  "seed": 9007199254740993, "temperature": 1.0, "top_p": 0.50,\n "messages": [{"role": "user", "content": "caf\\u00e9 \u00fc \ud83d\ude00"}], "stream": ${stream}, "logit_bias": {"50256": -100.0}}`;

async function send(provider: ProviderId, text: string): Promise<string> {
  const response = await fetch(`${proxy.proxyBase}/${provider}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
    body: text,
  });
  expect(response.status).toBe(200);
  await response.text();
  const requests = proxy.fakes.fakes[provider].requests;
  return requests[requests.length - 1].body;
}

describe('the body sent upstream', () => {
  it.each(['prov-b', 'prov-c'] as const)(
    '%s stream: only `stream_options` is added; 9007199254740993 and 1.0 arrive byte-identical',
    async (provider) => {
      const sent = body(true);
      const received = await send(provider, sent);
      expect(received).toBe(`{"stream_options":{"include_usage":true},${sent.slice(1)}`);
      expect(received).toContain('"seed": 9007199254740993');
      expect(received).toContain('"temperature": 1.0');
    },
  );

  it.each(['prov-b', 'prov-d', 'prov-e'] as const)(
    '%s without a stream (or a provider that always reports usage): every byte as sent',
    async (provider) => {
      const sent = body(false);
      expect(await send(provider, sent)).toBe(sent);
    },
  );

  it('a stream whose client already asked for usage: every byte as sent', async () => {
    const sent = `{"stream_options": {"include_usage": true}, ${body(true).slice(1)}`;
    expect(await send('prov-b', sent)).toBe(sent);
  });

  it('a stream with other stream options keeps them, with include_usage added inside', async () => {
    const sent = `{"stream_options": {"x_extra": 1.0}, ${body(true).slice(1)}`;
    expect(await send('prov-b', sent)).toBe(
      `{"stream_options": {"include_usage":true,"x_extra": 1.0}, ${body(true).slice(1)}`,
    );
  });
});
