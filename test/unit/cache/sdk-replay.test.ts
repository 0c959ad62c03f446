/**
 * The official SDKs must accept every stream a cache hit can send: stored
 * provider streams and streams synthesised from stored JSON answers. Each is
 * served over real HTTP on loopback to the SDK's own streaming client.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { assembleChatResponse, synthesizeChatEvents } from '../../../lambda/cache/replay/chat';
import { assembleMessagesResponse, synthesizeMessagesEvents } from '../../../lambda/cache/replay/messages';
import {
  expectedUsage,
  fixtureEvents,
  fixtureJson,
  fixtureNames,
  fixtureText,
  isStreamFixture,
  type ProviderFolder,
} from '../../fixtures';

/** Answers each request with the next queued stream, one event per write, as a provider would. */
class StreamServer {
  private readonly queue: string[][] = [];
  private server?: Server;
  requests = 0;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        this.requests++;
        const events = this.queue.shift() ?? [];
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        for (const event of events) {
          res.write(event);
          await new Promise((r) => setImmediate(r));
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  serve(events: string[]): void {
    this.queue.push(events);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const server = new StreamServer();
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  const base = await server.start();
  anthropic = new Anthropic({ apiKey: 'test-key', baseURL: base, maxRetries: 0 });
  openai = new OpenAI({ apiKey: 'test-key', baseURL: `${base}/v1`, maxRetries: 0 });
});

afterAll(() => server.stop());

const successful = (providers: ProviderFolder[]) =>
  providers.flatMap((p) => fixtureNames(p)).filter((name) => expectedUsage(name).status < 300);
const complete = (names: string[]) => names.filter((name) => isStreamFixture(name) && expectedUsage(name).complete);
const messagesJson = successful(['prov-a']).filter((name) => !isStreamFixture(name));
const messagesStreams = complete(successful(['prov-a']));
const chatJson = successful(['prov-b', 'prov-c', 'prov-d', 'prov-e']).filter((name) => !isStreamFixture(name));
// The SDK joins `content` as text, so Mistral's typed content parts are outside what it can assemble.
const chatStreams = complete(successful(['prov-b', 'prov-c', 'prov-d', 'prov-e'])).filter(
  (name) => !fixtureText(name).includes('"content":[{'),
);

const messageParams = {
  model: 'fam-sonnet-4-6',
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'Hi' }],
};
const chatParams = { model: 'fam-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };

/** A message as the SDK hands it over, without the SDK's own additions (`parsed_output` for structured outputs). */
function sdkMessage(message: unknown): unknown {
  const { parsed_output: _parsed, ...rest } = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
  return rest;
}

/** What a chat client sees of an answer. */
function visible(completion: unknown) {
  const c = completion as {
    id: unknown;
    model: unknown;
    choices: {
      index: number;
      message: { role: unknown; content: unknown; tool_calls?: unknown };
      finish_reason: unknown;
    }[];
    usage?: unknown;
  };
  return {
    id: c.id,
    model: c.model,
    // The SDK drops a `tool_calls: null`; either way the client sees no tool calls.
    choices: c.choices.map((choice) => ({
      index: choice.index,
      role: choice.message.role,
      content: choice.message.content,
      tool_calls: choice.message.tool_calls ?? undefined,
      finish_reason: choice.finish_reason,
    })),
    usage: c.usage,
  };
}

describe('@anthropic-ai/sdk reads cache hits', () => {
  it.each(messagesJson)('a stream synthesised from %s reassembles into the stored message', async (name) => {
    server.serve(synthesizeMessagesEvents(fixtureJson(name)));
    const message = await anthropic.messages.stream(messageParams).finalMessage();
    expect(sdkMessage(message)).toEqual(fixtureJson(name));
  });

  it.each(messagesStreams)('the SDK and the proxy assemble the stored stream %s alike', async (name) => {
    server.serve(fixtureEvents(name).map((e) => e.raw));
    const message = await anthropic.messages.stream(messageParams).finalMessage();
    expect(sdkMessage(message)).toEqual(assembleMessagesResponse(fixtureEvents(name)));
  });

  it('create({ stream: true }) yields every synthesised event, tool input included', async () => {
    const stored = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'fam-haiku-4-5-20251001',
      content: [
        { type: 'thinking', thinking: 'Look it up.', signature: 'c2ln' },
        { type: 'text', text: 'Looking up ✓' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: { order_id: 'A-17', flags: ['x'] } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 412, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 61 },
    };
    const events = synthesizeMessagesEvents(stored);
    server.serve(events);
    const stream = await anthropic.messages.create({ ...messageParams, stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toHaveLength(events.length);
    expect(types.at(-1)).toBe('message_stop');

    server.serve(events);
    const message = await anthropic.messages.stream(messageParams).finalMessage();
    expect(sdkMessage(message)).toEqual(stored);
  });
});

describe('openai SDK reads cache hits', () => {
  it.each(chatJson)('a stream synthesised from %s reassembles into the stored completion', async (name) => {
    server.serve(synthesizeChatEvents(fixtureJson(name)));
    const completion = await openai.chat.completions.stream(chatParams).finalChatCompletion();
    expect(visible(completion)).toEqual(visible(fixtureJson(name)));
  });

  it.each(chatStreams)('the SDK and the proxy assemble the stored stream %s alike', async (name) => {
    server.serve(fixtureEvents(name).map((e) => e.raw));
    const completion = await openai.chat.completions.stream(chatParams).finalChatCompletion();
    const assembled = visible(assembleChatResponse(fixtureEvents(name)));
    // The SDK knows nothing of Groq's `x_groq.usage`; the proxy reads it (see chat-replay tests).
    if (name.includes('x-groq')) assembled.usage = undefined;
    expect(visible(completion)).toEqual(assembled);
  });

  it('create({ stream: true }) yields every synthesised chunk and stops at [DONE], tool calls included', async () => {
    const stored = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1771000000,
      model: 'fam-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
    };
    const events = synthesizeChatEvents(stored);
    server.serve(events);
    const stream = await openai.chat.completions.create({ ...chatParams, stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(events.length - 1);
    expect(chunks.at(-1)?.usage).toEqual(stored.usage);

    server.serve(events);
    const completion = await openai.chat.completions.stream(chatParams).finalChatCompletion();
    expect(visible(completion)).toEqual(visible(stored));
  });
});
