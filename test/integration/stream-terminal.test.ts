/**
 * A stream whose terminal event reached the client is a complete answer (docs/caching.md, "What is
 * stored"; docs/behaviour.md): recorded as a success with the exact usage, and cached, even when the
 * provider's connection lingers after that event. Each official SDK (and LangChain) reads its stream
 * to the end, against fakes that end their body at once and fakes that keep the socket open after the
 * last event: no row is flagged, every answer is stored (the same question again is a HIT).
 */
import Anthropic from '@anthropic-ai/sdk';
import {
  ConverseStreamCommand,
  InvokeModelWithResponseStreamCommand,
  type BedrockRuntimeClient,
} from '@aws-sdk/client-bedrock-runtime';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { DEFAULT_BEDROCK_USAGE as U } from '../fakes/fake-bedrock';
import type { ProviderId } from '../fakes/start-fakes';
import { BEDROCK_MODEL, bedrockClient, rowOfRequester, uniqueRequester } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await proxy?.stop();
});

/** One question, read to its end by a client; `headers` carry the cache and requester headers. */
type Reader = (question: string, headers: Record<string, string>) => Promise<string>;

const openai = (provider: ProviderId, headers: Record<string, string>) =>
  new OpenAI({
    baseURL: `${proxy.proxyBase}/${provider}/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: headers,
  });

const chatThroughOpenAi =
  (provider: ProviderId, includeUsage = false): Reader =>
  async (question, headers) => {
    const stream = await openai(provider, headers).chat.completions.create({
      model: TEST_MODELS[provider],
      messages: [{ role: 'user', content: question }],
      stream: true,
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    return text;
  };

const responsesThroughOpenAi =
  (provider: ProviderId): Reader =>
  async (question, headers) => {
    const stream = await openai(provider, headers).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: question,
      stream: true,
    });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    return text;
  };

const messagesThroughAnthropic: Reader = async (question, headers) => {
  const client = new Anthropic({
    baseURL: proxy.proxyBase,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: headers,
  });
  const stream = await client.messages.create({
    model: TEST_MODELS['prov-a'],
    max_tokens: 64,
    messages: [{ role: 'user', content: question }],
    stream: true,
  });
  let text = '';
  for await (const event of stream)
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  return text;
};

const chatThroughLangChain: Reader = async (question, headers) => {
  const model = new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: proxy.account.token,
    maxRetries: 0,
    configuration: { baseURL: `${proxy.proxyBase}/prov-b/v1`, defaultHeaders: headers },
  });
  let text = '';
  for await (const chunk of await model.stream(question)) text += String(chunk.content);
  return text;
};

const bedrock = (headers: Record<string, string>): BedrockRuntimeClient =>
  bedrockClient(proxy.proxyBase, proxy.account.token, headers);

const converseStream: Reader = async (question, headers) => {
  const answer = await bedrock(headers).send(
    new ConverseStreamCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: question }] }] }),
  );
  let text = '';
  for await (const event of answer.stream!) text += event.contentBlockDelta?.delta?.text ?? '';
  return text;
};

const invokeStream: Reader = async (question, headers) => {
  const answer = await bedrock(headers).send(
    new InvokeModelWithResponseStreamCommand({
      modelId: BEDROCK_MODEL,
      body: JSON.stringify({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 100,
        messages: [{ role: 'user', content: question }],
      }),
    }),
  );
  let text = '';
  for await (const event of answer.body!) {
    const chunk = JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8')) as { delta?: { text?: string } };
    text += chunk.delta?.text ?? '';
  }
  return text;
};

/** Each dialect's terminal event, through the client that reads it. */
const CASES: Array<[name: string, upstream: ProviderId | 'bedrock', read: Reader]> = [
  ['chat `[DONE]`, openai SDK (prov-b, usage added by the proxy)', 'prov-b', chatThroughOpenAi('prov-b')],
  ['chat `[DONE]`, openai SDK (prov-b, usage asked)', 'prov-b', chatThroughOpenAi('prov-b', true)],
  ['chat `[DONE]`, openai SDK (prov-c, usage on the last chunk)', 'prov-c', chatThroughOpenAi('prov-c')],
  ['chat `[DONE]`, openai SDK (prov-d, usage on the finish chunk)', 'prov-d', chatThroughOpenAi('prov-d')],
  ['chat `[DONE]`, openai SDK (prov-e, usage under x_groq)', 'prov-e', chatThroughOpenAi('prov-e')],
  ['chat `[DONE]`, LangChain ChatOpenAI (prov-b)', 'prov-b', chatThroughLangChain],
  ['Responses `response.completed`, openai SDK (prov-b)', 'prov-b', responsesThroughOpenAi('prov-b')],
  ['Responses `response.completed`, openai SDK (prov-e)', 'prov-e', responsesThroughOpenAi('prov-e')],
  ['messages `message_stop`, Anthropic SDK (prov-a)', 'prov-a', messagesThroughAnthropic],
  ['ConverseStream `metadata`, AWS SDK', 'bedrock', converseStream],
  ['InvokeModelWithResponseStream, last chunk with the invocation metrics, AWS SDK', 'bedrock', invokeStream],
];

/** The tokens the provider reported for its last answer, as a row counts them. */
function reported(upstream: ProviderId | 'bedrock'): { input_tokens: number; output_tokens: number } {
  if (upstream === 'bedrock') return { input_tokens: U.input + U.cacheRead + U.cacheWrite, output_tokens: U.output };
  const usage = proxy.fakes.fakes[upstream].requests.at(-1)!.response.usage!;
  return { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
}

function lingerAfterTheLastEvent(upstream: ProviderId | 'bedrock', holdOpen: boolean): void {
  if (upstream === 'bedrock') proxy.fakes.bedrock.next({ holdOpen });
  else proxy.fakes.fakes[upstream].next({ holdOpen });
}

describe.each([
  ['the provider ends its body at once', false],
  ['the provider keeps its socket open after the last event', true],
])('%s', (_what, holdOpen) => {
  it.each(CASES)('%s: a success with exact usage, and cached', async (_name, upstream, read) => {
    const question = `terminal ${randomBytes(6).toString('hex')}`;
    const first = uniqueRequester('terminal');
    lingerAfterTheLastEvent(upstream, holdOpen);
    const text = await read(question, { 'x-proxy-cache': 'true', 'x-proxy-user': first });
    expect(text.length).toBeGreaterThan(0);
    const sent = reported(upstream);
    const row = await rowOfRequester(proxy, first);
    expect({ ...row, error: row.error ?? null }).toMatchObject({
      status_code: 200,
      error: null,
      cached: false,
      ...sent,
    });

    // Stored: the same question again is answered from the cache, with the same text.
    const again = uniqueRequester('terminal-again');
    expect(await read(question, { 'x-proxy-cache': 'true', 'x-proxy-user': again })).toBe(text);
    expect(await rowOfRequester(proxy, again)).toMatchObject({ status_code: 200, cached: true });
  });
});
