/**
 * Bedrock fallbacks through AWS's SDK (docs/fallbacks.md): a model answering 503 falls over to the
 * inference profile `x-proxy-fallback` names, on its own path; a ConverseStream or an
 * InvokeModelWithResponseStream (Anthropic body) cut mid-answer is continued there and reaches the
 * client as one well-formed event stream. Each request leaves one exact usage row.
 */
import {
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { BEDROCK_TEXT } from '../fakes/fake-bedrock';
import { BEDROCK_MODEL, bedrockClient, rowOfRequester, uniqueRequester } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => proxy.fakes.reset());

describe('Bedrock streams cut mid-answer, continued on another inference profile', () => {
  const FALLBACK_PROFILE = 'eu.anthropic.claude-sonnet-4-6';
  /** What the fallback reports, apart from the fake's default: its usage is told from the cut stream's. */
  const CONTINUATION = { input: 40, output: 30, cacheRead: 0, cacheWrite: 0 };
  /** USD per million tokens of both profiles (the regional Claude Sonnet 4.6 price in the bundled genai-prices data). */
  const PRICE = { input: 3.3, output: 16.5 };
  const bedrock = (user: string) =>
    bedrockClient(proxy.proxyBase, proxy.account.token, { 'x-proxy-user': user, 'x-proxy-fallback': FALLBACK_PROFILE });

  /** The row: the continuation's exact usage plus the cut stream's estimate, both at the profile's price. */
  async function expectContinuedRow(user: string, requestText: string, delivered: string): Promise<void> {
    const row = await rowOfRequester(proxy, user);
    const cutInput = Math.ceil(requestText.length / 4);
    const cutOutput = Math.ceil(delivered.length / 4);
    expect(row).toMatchObject({
      status_code: 200,
      model: FALLBACK_PROFILE,
      usage_estimated: true,
      input_tokens: CONTINUATION.input + cutInput,
      output_tokens: CONTINUATION.output + cutOutput,
    });
    expect(row.error).toBeUndefined();
    const nanos =
      ((CONTINUATION.input + cutInput) * PRICE.input + (CONTINUATION.output + cutOutput) * PRICE.output) * 1e3;
    expect(row.cost_nanos).toBe(Math.round(nanos));
    const fake = proxy.fakes.bedrock;
    expect(fake.requests.map((request) => request.model)).toEqual([BEDROCK_MODEL, FALLBACK_PROFILE]);
  }

  it('Converse answering 503 on every attempt: the fallback profile answers, on its own path', async () => {
    const fake = proxy.fakes.bedrock;
    fake.reset();
    for (let i = 0; i < 3; i++) fake.next({ status: 503, errorType: 'ServiceUnavailableException' });
    fake.next({ usage: CONTINUATION });
    const user = uniqueRequester('converse-fallback');
    const answer = await bedrock(user).send(
      new ConverseCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'Hello' }] }] }),
    );
    expect(answer.output?.message?.content?.[0]?.text).toBe(BEDROCK_TEXT.join(''));
    expect(fake.requests.map((request) => request.rawPath)).toEqual([
      ...Array<string>(3).fill(`/model/${BEDROCK_MODEL}/converse`),
      `/model/${FALLBACK_PROFILE}/converse`,
    ]);
    // The body goes as the client wrote it: Converse names its model in the path only.
    expect(fake.requests[3]!.body.equals(fake.requests[0]!.body)).toBe(true);
    const row = await rowOfRequester(proxy, user);
    expect(row).toMatchObject({ status_code: 200, model: FALLBACK_PROFILE, input_tokens: 40, output_tokens: 30 });
    expect(row.usage_estimated).toBeUndefined();
  });

  it('ConverseStream: one stream of valid frames, the text once, one messageStop and one metadata', async () => {
    const fake = proxy.fakes.bedrock;
    fake.reset();
    fake.next({ cutAfterFrames: 3 });
    fake.next({ usage: CONTINUATION });
    const user = uniqueRequester('converse-continued');
    const answer = await bedrock(user).send(
      new ConverseStreamCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'Hello' }] }] }),
    );
    let text = '';
    const kinds: string[] = [];
    for await (const event of answer.stream!) {
      kinds.push(...Object.keys(event).filter((key) => key !== '$unknown'));
      if (event.contentBlockDelta) {
        expect(event.contentBlockDelta.contentBlockIndex).toBe(0);
        text += event.contentBlockDelta.delta?.text ?? '';
      }
      if (event.metadata) expect(event.metadata.usage).toMatchObject({ inputTokens: 40, outputTokens: 30 });
    }
    const delivered = BEDROCK_TEXT.slice(0, 2).join('');
    expect(text).toBe(delivered + BEDROCK_TEXT.join(''));
    expect(kinds.filter((kind) => kind === 'messageStart')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'messageStop')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'metadata')).toHaveLength(1);
    // The fallback was sent the answer so far as Converse's assistant message, on its own path.
    const continuation = fake.requests[1]!;
    expect(continuation.rawPath).toBe(`/model/${FALLBACK_PROFILE}/converse-stream`);
    expect((continuation.json as { messages: unknown[] }).messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ text: delivered }],
    });
    await expectContinuedRow(user, 'userHello', delivered);
  });

  it('InvokeModelWithResponseStream (Anthropic body): one message, its chunks re-encoded, the text once', async () => {
    const fake = proxy.fakes.bedrock;
    fake.reset();
    // message_start, the text block's start and two text deltas.
    fake.next({ cutAfterFrames: 4 });
    fake.next({ usage: CONTINUATION });
    const user = uniqueRequester('invoke-continued');
    const body = {
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    };
    const answer = await bedrock(user).send(
      new InvokeModelWithResponseStreamCommand({ modelId: BEDROCK_MODEL, body: JSON.stringify(body) }),
    );
    const events: Array<{ type: string; index?: number; delta?: { text?: string }; usage?: unknown }> = [];
    for await (const part of answer.body!)
      if (part.chunk?.bytes)
        events.push(JSON.parse(Buffer.from(part.chunk.bytes).toString('utf8')) as (typeof events)[0]);
    const delivered = BEDROCK_TEXT.slice(0, 2).join('');
    const text = events
      .map((event) => (event.type === 'content_block_delta' ? (event.delta?.text ?? '') : ''))
      .join('');
    expect(text).toBe(delivered + BEDROCK_TEXT.join(''));
    for (const type of ['message_start', 'content_block_start', 'message_delta', 'message_stop'])
      expect(events.filter((event) => event.type === type)).toHaveLength(1);
    for (const event of events) if ('index' in event) expect(event.index).toBe(0);
    expect(events.find((event) => event.type === 'message_delta')!.usage).toMatchObject({
      input_tokens: 40,
      output_tokens: 30,
    });
    expect((fake.requests[1]!.json as { messages: unknown[] }).messages.at(-1)).toEqual({
      role: 'assistant',
      content: delivered,
    });
    await expectContinuedRow(user, 'bedrock-2023-05-31userHello', delivered);
  });

  it.each([
    ['cut inside a tool call', [{ toolUse: true, cutAfterFrames: 3 }], /toolUse block cannot be continued/, 1],
    [
      'whose prefill the fallback refuses',
      [{ cutAfterFrames: 3 }, { status: 400, errorType: 'ValidationException', errorMessage: 'No prefill here.' }],
      /the fallback could not continue the answer/,
      2,
    ],
  ] as const)(
    'a ConverseStream %s: the exception the SDK raises names the first failure',
    async (_, script, why, sent) => {
      const fake = proxy.fakes.bedrock;
      fake.reset();
      for (const behaviour of script) fake.next(behaviour);
      const user = uniqueRequester('converse-not-continued');
      const answer = await bedrock(user).send(
        new ConverseStreamCommand({
          modelId: BEDROCK_MODEL,
          messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
        }),
      );
      const failure = await (async () => {
        for await (const event of answer.stream!) void event;
      })().then(
        () => new Error('the stream ended as a success'),
        (error: unknown) => error as Error,
      );
      expect(failure.message).toMatch(/upstream connection closed mid-response/);
      expect(failure.message).toMatch(why);
      expect(failure.message).not.toMatch(/No prefill here/);
      expect(fake.requests).toHaveLength(sent);
      const row = await rowOfRequester(proxy, user);
      expect(String(row.error)).toMatch(why);
    },
  );
});
