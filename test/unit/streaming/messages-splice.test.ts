/**
 * The messages continuation (docs/fallbacks.md, "A stream cut mid-answer") over Anthropic's recorded
 * streams: what the client has of a cut stream decides the prefill, and the continuation is joined
 * so that the two read as one stream (one message_start, consistent block indices, one
 * message_delta with the continuation's whole usage, one message_stop).
 */
import { Readable, type Transform } from 'node:stream';
import { messagesContinuer } from '../../../lambda/streaming/messages-splice';
import { RelayCut } from '../../../lambda/streaming/relay';
import { fixtureText, splitSseBlocks } from '../../fixtures/index';

type Event = { type: string; [key: string]: unknown };

/** The fixture's SSE blocks as sent, each with its terminator. */
const blocks = (name: string) =>
  splitSseBlocks(fixtureText(name)).map((block) => `event: ${block.event}\ndata: ${block.data}\n\n`);
const sse = (...events: Event[]) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
const parse = (text: string): Event[] => splitSseBlocks(text).map((block) => JSON.parse(block.data) as Event);
const textOf = (events: Event[]) =>
  events
    .filter((event) => event.type === 'content_block_delta')
    .map((event) => (event.delta as { text?: string }).text ?? '')
    .join('');
const body = (messages: unknown[] = [{ role: 'user', content: 'Say hello.' }]) =>
  Buffer.from(JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages }));

/** The request as the proxy parsed it. */
const asked = JSON.parse(body().toString()) as Record<string, unknown>;

async function through(splice: Transform, input: string): Promise<{ out: string; error?: Error }> {
  let out = '';
  try {
    // Cut into 7-byte pieces: events split across chunks.
    const pieces = Buffer.from(input)
      .toString('latin1')
      .match(/[\s\S]{1,7}/g)!;
    for await (const piece of Readable.from(pieces.map((p) => Buffer.from(p, 'latin1'))).pipe(splice))
      out += String(piece);
  } catch (error) {
    return { out, error: error as Error };
  }
  return { out };
}

describe('messagesContinuer', () => {
  it('a stream cut inside its text block: the text as the prefill; the continuation joined into the same block', async () => {
    const first = blocks('prov-a/text.sse').slice(0, 5).join('');
    const continuer = messagesContinuer(asked);
    continuer.append(first);
    expect(continuer.unsound()).toBeUndefined();
    const sent = JSON.parse(continuer.prefill(body()).toString()) as { messages: unknown[] };
    expect(sent.messages.at(-1)).toEqual({ role: 'assistant', content: 'Sure! A proxy' });

    const continuation = fixtureText('prov-a/text.sse');
    const { out, error } = await through(continuer.splice('cut'), continuation);
    expect(error).toBeUndefined();
    const all = parse(first + out);
    expect(all.map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      ...Array<string>(8).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const event of all.filter((e) => 'index' in e)) expect(event.index).toBe(0);
    expect(textOf(all)).toBe(`Sure! A proxy${textOf(parse(continuation))}`);
    // The continuation's usage, whole: its message_start's fields overwritten by message_delta's running totals.
    const delta = all.find((event) => event.type === 'message_delta')!;
    expect(delta.usage).toMatchObject({ input_tokens: 19, output_tokens: 24, service_tier: 'standard' });
  });

  it('white space the client has at the end is left out of the prefill and of the continuation', async () => {
    const start = parse(blocks('prov-a/text.sse').slice(0, 3).join(''));
    const continuer = messagesContinuer(asked);
    continuer.append(
      sse(...start, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello, ' } }),
    );
    const sent = JSON.parse(continuer.prefill(body()).toString()) as { messages: Array<{ content: string }> };
    expect(sent.messages.at(-1)!.content).toBe('Hello,');
    const words = [' ', ' world', ' again'].map((text) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text },
    }));
    const { out } = await through(continuer.splice('cut'), sse(start[0]!, start[1]!, ...words));
    expect(textOf(parse(out))).toBe('world again');
  });

  it('a stream cut after its block closed: the continuation’s blocks follow it; nothing delivered: no prefill', async () => {
    const closed = messagesContinuer(asked);
    const events = blocks('prov-a/text.sse');
    closed.append(events.slice(0, 5).join('') + events[11]);
    const { out } = await through(closed.splice('cut'), fixtureText('prov-a/text.sse'));
    const indices = parse(out)
      .filter((event) => 'index' in event)
      .map((event) => event.index);
    expect(new Set(indices)).toEqual(new Set([1]));
    expect(parse(out)[0]!.type).toBe('content_block_start');

    const nothing = messagesContinuer(asked);
    nothing.append(events[0]!);
    expect(nothing.prefill(body()).equals(body())).toBe(true);
    // Cut before even message_start reached the client: the continuation's is the one it gets.
    const before = messagesContinuer(asked);
    const { out: whole } = await through(before.splice('cut'), fixtureText('prov-a/text.sse'));
    expect(parse(whole).map((event) => event.type)).toEqual(
      parse(fixtureText('prov-a/text.sse'))
        .map((event) => event.type)
        .filter((type) => type !== 'ping'),
    );
  });

  it('a tool call or thinking cut short, a request that already ends with the assistant, an ended answer: not continued', () => {
    const tool = messagesContinuer(asked);
    tool.append(blocks('prov-a/tool-use.sse').slice(0, 4).join(''));
    expect(tool.unsound()).toMatch(/tool_use block/);
    const thinking = messagesContinuer(asked);
    thinking.append(blocks('prov-a/thinking.sse').slice(0, 3).join(''));
    expect(thinking.unsound()).toMatch(/thinking block/);
    const prefilled = messagesContinuer({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
      ],
    });
    expect(prefilled.unsound()).toMatch(/already ends with an assistant message/);
    const ended = messagesContinuer(asked);
    ended.append(blocks('prov-a/text.sse').slice(0, -1).join(''));
    expect(ended.unsound()).toMatch(/already ended/);
  });

  it('a continuation that goes on with a tool call, or is not a messages stream: a RelayCut, nothing more passed', async () => {
    const continuer = messagesContinuer(asked);
    continuer.append(blocks('prov-a/text.sse').slice(0, 5).join(''));
    const tool = await through(continuer.splice('cut; could not continue'), fixtureText('prov-a/tool-use.sse'));
    expect(tool.error).toBeInstanceOf(RelayCut);
    expect(tool.error?.message).toMatch(/^cut; could not continue \(it went on with a tool_use block\)$/);
    expect(parse(tool.out).map((event) => event.type)).not.toContain('content_block_delta');
    const other = await through(continuer.splice('cut'), 'data: {"type":"content_block_delta","index":0}\n\n');
    expect(other.error).toBeInstanceOf(RelayCut);
  });
});
