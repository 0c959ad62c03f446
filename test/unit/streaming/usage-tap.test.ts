import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { providerById } from '../../../lambda/providers/registry';
import type { Dialect } from '../../../lambda/providers/types';
import { NO_USAGE } from '../../../lambda/providers/usage';
import { UsageTap, type TapOptions, type TapResult } from '../../../lambda/streaming/usage-tap';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { expectedUsage, fixtureEvents, fixtureNames, fixtureText, isStreamFixture } from '../../fixtures';
import { oneBytePieces, randomCuts, seededRandom, toCr, toCrlf, withUnicode } from '../../support/fragments';

function dialectOf(name: string): Dialect {
  return providerById(name.split('/')[0])!.dialect;
}

async function runTap(pieces: Buffer[], options: TapOptions): Promise<{ output: Buffer; result: TapResult }> {
  const tap = new UsageTap(options);
  const out: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.push(chunk);
      done();
    },
  });
  await pipeline(Readable.from(pieces, { objectMode: false }), tap, sink);
  return { output: Buffer.concat(out), result: tap.result() };
}

function summary(result: TapResult) {
  const usage = result.usage ?? NO_USAGE;
  return { model: result.model ?? null, ...usage, error: result.error, complete: result.complete };
}

function wanted(name: string) {
  const {
    model,
    inputTokens,
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    cacheWrite1hTokens,
    serverToolUse,
    error,
    complete,
    status,
  } = expectedUsage(name);
  const json = !isStreamFixture(name);
  // A JSON body's error message is read by the caller from `json`; the tap reports it complete once parsed.
  return {
    model,
    inputTokens,
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    ...(cacheWrite1hTokens ? { cacheWrite1hTokens } : {}),
    ...(serverToolUse ? { serverToolUse } : {}),
    error: json ? undefined : error,
    complete: json ? status > 0 : complete,
  };
}

const SEEDS = [1, 2, 3, 7, 42];

describe('UsageTap passes every fixture through untouched', () => {
  const cases = fixtureNames().flatMap((name) => SEEDS.map((seed) => ({ name, seed })));

  it.each(cases)('$name split with seed $seed: same bytes out, expected usage read', async ({ name, seed }) => {
    const input = Buffer.from(fixtureText(name), 'utf8');
    const format = isStreamFixture(name) ? 'sse' : 'json';
    const { output, result } = await runTap(randomCuts(input, seededRandom(seed)), {
      dialect: dialectOf(name),
      format,
      hideAddedUsage: false,
    });
    expect(output.equals(input)).toBe(true);
    expect(summary(result)).toEqual(wanted(name));
    expect(result.bytes).toBe(input.length);
    if (format === 'json') expect(result.json).toEqual(JSON.parse(fixtureText(name)));
  });

  it.each(fixtureNames().filter(isStreamFixture))(
    '%s with unicode and CRLF, one byte at a time: same bytes, observer sees the exact text',
    async (name) => {
      const text = toCrlf(withUnicode(fixtureText(name)));
      const input = Buffer.from(text, 'utf8');
      const seen: string[] = [];
      const { output, result } = await runTap(oneBytePieces(input), {
        dialect: dialectOf(name),
        format: 'sse',
        hideAddedUsage: false,
        copy: { append: (t) => seen.push(t), finish: async () => undefined },
      });
      expect(output.equals(input)).toBe(true);
      expect(seen.join('')).toBe(text);
      expect(seen.every((piece) => !piece.includes('\ufffd'))).toBe(true);
      expect(summary(result)).toEqual(wanted(name));
    },
  );
});

describe('UsageTap taking out what the stream usage the proxy asked for added', () => {
  const usageOnlyBlocks = (name: string) =>
    fixtureEvents(name)
      .filter((e) => e.data.includes('"choices":[],"usage":{'))
      .map((e) => e.raw);
  /** What the provider sends when not asked: no usage-only block, no `usage` member on any chunk. */
  const unasked: Record<string, () => string> = {
    'prov-b/text.sse': () => fixtureText('prov-b/text-no-usage.sse'),
    'prov-c/text.sse': () => fixtureText('prov-c/text-no-usage.sse'),
    'prov-b/reasoning-excluded.sse': () =>
      fixtureText('prov-b/reasoning-excluded.sse').replace(usageOnlyBlocks('prov-b/reasoning-excluded.sse')[0]!, ''),
    'prov-b/stream-error.sse': () => fixtureText('prov-b/stream-error.sse').replaceAll(',"usage":null', ''),
  };

  it.each(Object.keys(unasked))(
    '%s: the client gets what the provider sends unasked, byte for byte; the row still gets the usage',
    async (name) => {
      const expected = unasked[name]!();
      const input = Buffer.from(fixtureText(name), 'utf8');
      for (const pieces of [
        [input],
        oneBytePieces(input),
        ...SEEDS.map((seed) => randomCuts(input, seededRandom(seed))),
      ]) {
        const { output, result } = await runTap(pieces, {
          dialect: chatDialect,
          format: 'sse',
          hideAddedUsage: true,
        });
        expect(output.toString('utf8')).toBe(expected);
        // What is taken out is still read: the row gets the usage the client doesn't see.
        expect(summary(result)).toEqual(wanted(name));
      }
    },
  );

  it.each(Object.keys(unasked).flatMap((name) => [[name, 'CRLF', toCrlf] as const, [name, 'CR', toCr] as const]))(
    '%s with %s line endings: what is taken out leaves every line ending as the provider sent it',
    async (name, _, ending) => {
      const input = Buffer.from(ending(fixtureText(name)), 'utf8');
      for (const pieces of [[input], ...SEEDS.map((seed) => randomCuts(input, seededRandom(seed)))]) {
        const { output, result } = await runTap(pieces, { dialect: chatDialect, format: 'sse', hideAddedUsage: true });
        expect(output.toString('utf8')).toBe(ending(unasked[name]!()));
        expect(summary(result)).toEqual(wanted(name));
      }
    },
  );

  it.each(['prov-b/text-no-usage.sse', 'prov-c/text-no-usage.sse'])(
    '%s: nothing to take out, every byte passes',
    async (name) => {
      const input = Buffer.from(fixtureText(name), 'utf8');
      const { output, result } = await runTap(randomCuts(input, seededRandom(5)), {
        dialect: chatDialect,
        format: 'sse',
        hideAddedUsage: true,
      });
      expect(output.equals(input)).toBe(true);
      expect(summary(result)).toEqual(wanted(name));
    },
  );

  it('a usage-only block without its blank line at the very end is still hidden at flush', async () => {
    const text = fixtureText('prov-b/text.sse').replace(/data: \[DONE\]\n\n$/, '');
    const block = usageOnlyBlocks('prov-b/text.sse')[0]!;
    const input = Buffer.from(text.slice(0, -2), 'utf8');
    const { output, result } = await runTap([input], { dialect: chatDialect, format: 'sse', hideAddedUsage: true });
    expect(output.toString('utf8')).toBe(text.replace(block, '').replaceAll(',"usage":null', ''));
    expect(result.usage?.inputTokens).toBe(23);
    expect(result.complete).toBe(false);
  });
});

describe('UsageTap results', () => {
  it('a stream cut off before its terminal event keeps the tokens seen and says incomplete', async () => {
    const events = fixtureEvents('prov-a/prompt-cache.sse');
    const cut = events
      .filter((e) => e.event !== 'message_stop')
      .map((e) => e.raw)
      .join('');
    const { result } = await runTap([Buffer.from(cut)], {
      dialect: messagesDialect,
      format: 'sse',
      hideAddedUsage: false,
    });
    expect(summary(result)).toEqual({ ...wanted('prov-a/prompt-cache.sse'), complete: false });
  });

  it('a truncated JSON body gives no usage and complete: false', async () => {
    const text = fixtureText('prov-b/text.json');
    const { result } = await runTap([Buffer.from(text.slice(0, text.length - 5))], {
      dialect: chatDialect,
      format: 'json',
      hideAddedUsage: false,
    });
    expect(result.json).toBeUndefined();
    expect(result.usage).toBeUndefined();
    expect(result.complete).toBe(false);
  });

  it("the copy's finish gets the final result before the client stream ends", async () => {
    const order: string[] = [];
    let given: TapResult | undefined;
    const tap = new UsageTap({
      dialect: chatDialect,
      format: 'sse',
      hideAddedUsage: false,
      copy: {
        append: () => undefined,
        finish: async (result) => {
          given = result;
          order.push('finish');
        },
      },
    });
    tap.on('end', () => order.push('end'));
    const sink = new Writable({ write: (_c, _e, done) => done() });
    await pipeline(Readable.from([Buffer.from(fixtureText('prov-e/text.sse'))], { objectMode: false }), tap, sink);
    expect(order).toEqual(['finish', 'end']);
    expect(summary(given!)).toEqual(wanted('prov-e/text.sse'));
  });

  const BIG = 17 * 1024 * 1024;
  const bigBodies: [
    string,
    Dialect,
    object,
    { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
  ][] = [
    [
      'chat',
      chatDialect,
      {
        id: 'chatcmpl-big',
        object: 'chat.completion',
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(BIG) }, finish_reason: 'length' }],
        usage: {
          prompt_tokens: 12,
          completion_tokens: 4_000_000,
          total_tokens: 4_000_012,
          prompt_tokens_details: { cached_tokens: 2 },
        },
      },
      { inputTokens: 12, outputTokens: 4_000_000, cacheReadTokens: 2, cacheWriteTokens: 0 },
    ],
    [
      'messages',
      messagesDialect,
      {
        id: 'msg_big',
        type: 'message',
        model: 'claude-sonnet-4-6',
        content: [{ type: 'text', text: 'y'.repeat(BIG) }],
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 3,
          cache_read_input_tokens: 5,
          cache_creation: { ephemeral_5m_input_tokens: 3 },
          output_tokens: 4_100_000,
        },
      },
      { inputTokens: 18, outputTokens: 4_100_000, cacheReadTokens: 5, cacheWriteTokens: 3 },
    ],
  ];

  it.each(bigBodies)(
    'a %s JSON body over 16 MB still yields its usage (tail search)',
    async (_label, dialect, body, usage) => {
      const input = Buffer.from(JSON.stringify(body), 'utf8');
      const pieces: Buffer[] = [];
      for (let at = 0; at < input.length; at += 64 * 1024) pieces.push(input.subarray(at, at + 64 * 1024));
      const { output, result } = await runTap(pieces, { dialect, format: 'json', hideAddedUsage: false });
      expect(output.length).toBe(input.length);
      expect(result.bytes).toBe(input.length);
      expect(result.usage).toEqual(usage);
      expect(result.complete).toBe(true);
    },
  );
});
