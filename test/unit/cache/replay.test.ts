import type { Readable } from 'node:stream';
import type { CachedResponse } from '../../../lambda/cache/response-cache';
import { providerById } from '../../../lambda/providers/registry';
import type { Dialect } from '../../../lambda/providers/types';
import { NO_USAGE } from '../../../lambda/providers/usage';
import { replayCached } from '../../../lambda/cache/replay';
import { expectedUsage, fixtureEvents, fixtureNames, fixtureText, isStreamFixture } from '../../fixtures';
import { decodeAll } from '../../support/fragments';

const dialectOf = (name: string): Dialect => providerById(name.split('/')[0])!.dialect;

function entryFor(name: string): CachedResponse {
  const expected = expectedUsage(name);
  const sse = isStreamFixture(name);
  return {
    format: sse ? 'sse' : 'json',
    status: 200,
    contentType: sse ? 'text/event-stream' : 'application/json',
    body: fixtureText(name),
    model: expected.model ?? undefined,
    usage: {
      inputTokens: expected.inputTokens,
      outputTokens: expected.outputTokens,
      cacheReadTokens: expected.cacheReadTokens,
      cacheWriteTokens: expected.cacheWriteTokens,
    },
    costNanos: 0,
    storedAt: 0,
  };
}

async function chunksOf(body: Readable): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
  return chunks;
}

function usageOfStream(dialect: Dialect, text: string) {
  const reader = dialect.newStreamReader();
  for (const event of decodeAll([text])) reader.onEvent(event);
  const outcome = reader.outcome();
  return { model: outcome.model ?? null, ...(outcome.usage ?? NO_USAGE), complete: outcome.complete };
}

const stored = fixtureNames().filter(
  (name) => expectedUsage(name).status < 300 && (!isStreamFixture(name) || expectedUsage(name).complete),
);
const storedStreams = stored.filter(isStreamFixture);
const storedJson = stored.filter((name) => !isStreamFixture(name));

const expectedSummary = (name: string) => {
  const { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cacheWrite1hTokens, serverToolUse } =
    expectedUsage(name);
  return {
    model,
    inputTokens,
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    ...(cacheWrite1hTokens ? { cacheWrite1hTokens } : {}),
    ...(serverToolUse ? { serverToolUse } : {}),
  };
};

describe('replayCached', () => {
  it.each(storedStreams)('%s replayed as a stream: the stored bytes, one event per chunk', async (name) => {
    const { contentType, body } = replayCached(entryFor(name), {
      dialect: dialectOf(name),
      stream: true,
      hideAddedUsage: false,
      clientAskedForUsage: true,
    })!;
    expect(contentType).toBe('text/event-stream');
    const chunks = await chunksOf(body);
    expect(chunks.join('')).toBe(fixtureText(name));
    expect(chunks).toEqual(fixtureEvents(name).map((e) => e.raw));
  });

  it.each(['prov-b', 'prov-c'])(
    'a stored %s stream replayed to a client that did not ask for usage is what the provider sends unasked',
    async (provider) => {
      const name = `${provider}/text.sse`;
      const { body } = replayCached(entryFor(name), {
        dialect: dialectOf(name),
        stream: true,
        hideAddedUsage: true,
        clientAskedForUsage: false,
      })!;
      expect((await chunksOf(body)).join('')).toBe(fixtureText(`${provider}/text-no-usage.sse`));
    },
  );

  it.each(storedStreams)(
    '%s served to a non-streaming request: one JSON body with the same model and usage',
    async (name) => {
      const dialect = dialectOf(name);
      const { contentType, body } = replayCached(entryFor(name), {
        dialect,
        stream: false,
        hideAddedUsage: false,
        clientAskedForUsage: true,
      })!;
      expect(contentType).toBe('application/json');
      const read = dialect.readResponse(JSON.parse((await chunksOf(body)).join('')));
      expect({ model: read.model ?? null, ...(read.usage ?? NO_USAGE) }).toEqual(expectedSummary(name));
    },
  );

  it.each(storedJson)('%s served to a non-streaming request: the stored body unchanged', async (name) => {
    const { contentType, body } = replayCached(entryFor(name), {
      dialect: dialectOf(name),
      stream: false,
      hideAddedUsage: false,
      clientAskedForUsage: true,
    })!;
    expect(contentType).toBe('application/json');
    expect((await chunksOf(body)).join('')).toBe(fixtureText(name));
  });

  it.each(storedJson)(
    '%s served to a streaming request: a complete stream reporting the same model and usage',
    async (name) => {
      const dialect = dialectOf(name);
      const { contentType, body } = replayCached(entryFor(name), {
        dialect,
        stream: true,
        hideAddedUsage: false,
        clientAskedForUsage: true,
      })!;
      expect(contentType).toBe('text/event-stream; charset=utf-8');
      const text = (await chunksOf(body)).join('');
      expect(usageOfStream(dialect, text)).toEqual({ ...expectedSummary(name), complete: true });
    },
  );
});
