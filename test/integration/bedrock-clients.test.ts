/**
 * Amazon Bedrock through the two other clients teams use, as docs/bedrock.md shows them:
 * Anthropic's `@anthropic-ai/bedrock-sdk` (InvokeModel with Anthropic's messages body, and its
 * stream) and the Vercel AI SDK's `@ai-sdk/amazon-bedrock` (Converse and ConverseStream), each in
 * stored mode (the proxy signs with its AWS credentials; the fake verifies the signature) and in
 * pass-through mode (the caller's Bedrock API key), each call with its exact row.
 */
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BEDROCK_TEXT, DEFAULT_BEDROCK_USAGE } from '../fakes/fake-bedrock';
import {
  BEDROCK_COST_NANOS as COST_NANOS,
  BEDROCK_MODEL as MODEL,
  rowOfRequester,
  uniqueRequester as requester,
} from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const U = DEFAULT_BEDROCK_USAGE;
const ownKey = () => {
  const key = `ABSKQmVkcm9ja0FQSUtleS${randomBytes(16).toString('hex')}`;
  proxy.secrets.add(key);
  return key;
};

const rowOf = (user: string) => rowOfRequester(proxy, user);

const exactRow = (user: string, kind: string, stream: boolean, mode: string) => ({
  provider: 'bedrock',
  kind,
  model: MODEL,
  input_tokens: U.input + U.cacheRead + U.cacheWrite,
  output_tokens: U.output,
  cache_read_tokens: U.cacheRead,
  cache_write_tokens: U.cacheWrite,
  cost_nanos: COST_NANOS,
  priced: true,
  status_code: 200,
  stream,
  requester: user,
  mode,
});

const modes = [
  ['stored', () => ({ key: proxy.account.token, headers: {} as Record<string, string>, auth: 'sigv4' })],
  [
    'pass-through',
    () => {
      const key = ownKey();
      return { key, headers: { 'x-proxy-token': proxy.account.token } as Record<string, string>, auth: 'bearer' };
    },
  ],
] as const;

describe.each(modes)('@anthropic-ai/bedrock-sdk, %s mode', (mode, credentials) => {
  function client(user: string) {
    const { key, headers, auth } = credentials();
    const anthropic = new AnthropicBedrock({
      baseURL: `${proxy.proxyBase}/bedrock`,
      apiKey: key,
      awsRegion: 'us-east-1',
      maxRetries: 0,
      defaultHeaders: { ...headers, 'x-proxy-user': user },
    });
    return { anthropic, key, auth };
  }

  it('messages.create: the message as sent, the row exact', async () => {
    const user = requester('anthropic-bedrock');
    const { anthropic, key, auth } = client(user);
    const message = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: BEDROCK_TEXT.join('') });
    const upstream = proxy.fakes.bedrock.requests.at(-1)!;
    expect(upstream).toMatchObject({
      operation: 'invoke',
      auth,
      signatureProblem: undefined,
      ...(auth === 'bearer' ? { bearer: key } : {}),
    });
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'invoke', false, mode));
  });

  it('messages.stream: the text in order, the final message’s usage, the row exact', async () => {
    const user = requester('anthropic-bedrock-stream');
    const { anthropic } = client(user);
    const stream = anthropic.messages.stream({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const deltas: string[] = [];
    stream.on('text', (text) => deltas.push(text));
    const final = await stream.finalMessage();
    expect(deltas.join('')).toBe(BEDROCK_TEXT.join(''));
    expect(final.usage).toMatchObject({ output_tokens: U.output, cache_read_input_tokens: U.cacheRead });
    expect(proxy.fakes.bedrock.requests.at(-1)).toMatchObject({
      operation: 'invoke-with-response-stream',
      signatureProblem: undefined,
    });
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'invoke', true, mode));
  });
});

/** The AI SDK is ES modules only: it runs in its own process, as an application would (support/framework-client.mjs). */
async function aiSdk(
  stream: boolean,
  user: string,
  key?: string,
): Promise<{ text: string; usage?: { inputTokens?: number } }> {
  const args = [
    join(__dirname, 'support', 'framework-client.mjs'),
    `ai-bedrock:${stream ? 'stream' : 'json'}`,
    proxy.proxyBase,
    proxy.account.token,
    user,
    ...(key ? [key] : []),
  ];
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 30_000 });
  return JSON.parse(stdout) as { text: string; usage?: { inputTokens?: number } };
}

describe.each(['stored', 'pass-through'] as const)('@ai-sdk/amazon-bedrock, %s mode', (mode) => {
  it.each([false, true])('stream %s (Converse / ConverseStream): the text, the row exact', async (stream) => {
    const user = requester('ai-sdk');
    const key = mode === 'pass-through' ? ownKey() : undefined;
    const result = await aiSdk(stream, user, key);
    expect(result.text).toBe(BEDROCK_TEXT.join(''));
    const upstream = proxy.fakes.bedrock.requests.at(-1)!;
    expect(upstream).toMatchObject({
      operation: stream ? 'converse-stream' : 'converse',
      auth: key ? 'bearer' : 'sigv4',
      signatureProblem: undefined,
    });
    if (key) expect(upstream.bearer).toBe(key);
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'converse', stream, mode));
  });
});
