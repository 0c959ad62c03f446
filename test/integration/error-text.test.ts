import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/** The row's `error` is the provider's own message, whatever shape its error body has. */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const ROW_ERROR_MAX = 2_000;

async function failingCall(provider: ProviderId): Promise<{ status: number; requestId: string }> {
  const error =
    provider === 'prov-a'
      ? await new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 }).messages
          .create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
          .catch((e: unknown) => e)
      : await new OpenAI({
          baseURL: `${proxy.proxyBase}/${provider}/v1`,
          apiKey: proxy.account.token,
          maxRetries: 0,
        }).chat.completions
          .create({ model: 'some-model', messages: [{ role: 'user', content: 'hi' }] })
          .catch((e: unknown) => e);
  const apiError = error as { status: number; headers: Headers };
  return { status: apiError.status, requestId: apiError.headers.get('x-proxy-request-id')! };
}

const mistral422 = {
  object: 'error',
  message: {
    detail: [
      {
        type: 'extra_forbidden',
        loc: ['body', 'reasoning_effort'],
        msg: 'Extra inputs are not permitted',
        input: 'high',
      },
    ],
  },
  type: 'invalid_request_message_error',
  param: null,
  code: null,
};

const cases: Array<[string, ProviderId, number, unknown, string]> = [
  [
    "Mistral's 422 validation error (message is an object)",
    'prov-d',
    422,
    mistral422,
    'body.reasoning_effort: Extra inputs are not permitted',
  ],
  [
    'a plain string message',
    'prov-d',
    429,
    { object: 'error', message: 'Requests rate limit exceeded', type: 'rate_limited' },
    'Requests rate limit exceeded',
  ],
  [
    "Gemini's array around the error",
    'prov-c',
    400,
    [{ error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } }],
    'API key not valid.',
  ],
  ['an object with `detail`', 'prov-e', 404, { detail: 'Not Found' }, 'Not Found'],
  [
    'a detail array',
    'prov-b',
    422,
    { detail: [{ loc: ['body', 'model'], msg: 'Field required' }] },
    'body.model: Field required',
  ],
  [
    'the messages error shape',
    'prov-a',
    529,
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    'Overloaded',
  ],
];

describe("the row's error", () => {
  it.each(cases)('%s', async (_title, provider, status, errorBody, expected) => {
    // A 429 or 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    const times = status === 429 || status >= 500 ? 3 : 1;
    for (let i = 0; i < times; i++) proxy.fakes.fakes[provider].next({ status, errorBody });
    const call = await failingCall(provider);
    expect(call.status).toBe(status);
    const [row] = await proxy.rowsFor(proxy.account.token, [call.requestId]);
    expect(row).toMatchObject({ status_code: status, error: expected, input_tokens: 0, cost_usd: 0 });
  });

  it('a gateway HTML page becomes its readable text', async () => {
    // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-b'].next({ nonJsonErrorBody: true, status: 502 });
    const call = await failingCall('prov-b');
    const [row] = await proxy.rowsFor(proxy.account.token, [call.requestId]);
    expect(row.error).toBe('502 Bad Gateway');
  });

  it('is cut to the row bound, however long the message', async () => {
    const detail = Array.from({ length: 400 }, (_, i) => ({
      loc: ['body', 'messages', i, 'content'],
      msg: 'Input should be a valid string',
    }));
    proxy.fakes.fakes['prov-d'].next({ status: 422, errorBody: { object: 'error', message: { detail } } });
    const call = await failingCall('prov-d');
    const [row] = await proxy.rowsFor(proxy.account.token, [call.requestId]);
    const error = row.error as string;
    expect(error.length).toBe(ROW_ERROR_MAX);
    expect(error.startsWith('body.messages.0.content: Input should be a valid string; body.messages.1.content:')).toBe(
      true,
    );
    expect(error.endsWith('…')).toBe(true);
  });
});
