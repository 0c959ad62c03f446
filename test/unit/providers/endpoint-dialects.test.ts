/**
 * The wire formats beyond chat and messages, read from the fixtures in
 * `test/fixtures/endpoints` through the same usage tap the proxy uses, with
 * streams cut at awkward places; and the Responses API's stream ↔ JSON replay.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { embeddingsDialect } from '../../../lambda/providers/dialects/embeddings';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { passthroughDialect } from '../../../lambda/providers/dialects/passthrough';
import { assembleResponsesResponse, synthesizeResponsesEvents } from '../../../lambda/cache/replay/responses';
import { responsesDialect } from '../../../lambda/providers/dialects/responses';
import type { Dialect } from '../../../lambda/providers/types';
import { NO_USAGE } from '../../../lambda/providers/usage';
import { SseDecoder } from '../../../lambda/sse/sse-decoder';
import { UsageTap } from '../../../lambda/streaming/usage-tap';
import { endpointFixtureNames, expectedEndpointUsage, fixtureJson, fixtureText } from '../../fixtures';
import { oneBytePieces, randomCuts, seededRandom } from '../../support/fragments';

function dialectFor(name: string): Dialect {
  if (name.includes('responses')) return responsesDialect;
  if (name.includes('embeddings')) return embeddingsDialect;
  return passthroughDialect(name.startsWith('anthropic') ? messagesDialect : chatDialect, 'free');
}

async function read(name: string, pieces: Buffer[]) {
  const tap = new UsageTap({
    dialect: dialectFor(name),
    format: name.endsWith('.sse') ? 'sse' : 'json',
    hideAddedUsage: false,
  });
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(pieces),
    tap,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk);
        done();
      },
    }),
  );
  const result = tap.result();
  return {
    output: Buffer.concat(out).toString('utf8'),
    read: {
      model: result.model ?? null,
      ...(result.usage ?? NO_USAGE),
      error: result.error,
      complete: result.complete,
    },
  };
}

function wanted(name: string) {
  const { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, error, complete } =
    expectedEndpointUsage(name);
  const sse = name.endsWith('.sse');
  return {
    model,
    inputTokens,
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    error: sse ? error : undefined,
    complete: sse ? complete : true,
  };
}

describe.each(endpointFixtureNames())('%s', (name) => {
  const text = fixtureText(`endpoints/${name}`);

  it('reads the expected model and usage, passing every byte through', async () => {
    const { output, read: result } = await read(name, [Buffer.from(text)]);
    expect(output).toBe(text);
    expect(result).toEqual(wanted(name));
  });

  it('reads the same whatever the chunking', async () => {
    const random = seededRandom(name.length * 7919);
    for (const pieces of [
      oneBytePieces(Buffer.from(text)),
      randomCuts(Buffer.from(text), random),
      randomCuts(Buffer.from(text), random),
    ]) {
      expect((await read(name, pieces)).read).toEqual(wanted(name));
    }
  });
});

describe('Responses API', () => {
  const decode = (text: string) => {
    const decoder = new SseDecoder();
    return [...decoder.push(text), ...decoder.end()];
  };

  it('a stored stream assembles into the response of its terminal event, equal to the JSON answer', () => {
    const assembled = assembleResponsesResponse(decode(fixtureText('endpoints/openai-responses.sse')));
    expect(assembled).toEqual(fixtureJson('endpoints/openai-responses.json'));
  });

  it('a stored JSON answer becomes the documented event sequence, ending in response.completed with the usage', () => {
    const json = fixtureJson('endpoints/openai-responses.json');
    const events = decode(synthesizeResponsesEvents(json).join(''));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => JSON.parse(e.data).sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(JSON.parse(events.at(-1)!.data).response).toEqual(json);
    // Read back by the dialect, the synthesised stream reports what the JSON did.
    const reader = responsesDialect.newStreamReader();
    for (const event of events) reader.onEvent(event);
    expect(reader.outcome()).toMatchObject({
      model: 'gpt-4.1-2025-04-14',
      usage: { inputTokens: 2036, outputTokens: 187, cacheReadTokens: 1920 },
      complete: true,
    });
  });

  it('an incomplete answer replays as response.incomplete', () => {
    const json = { ...(fixtureJson('endpoints/openai-responses.json') as object), status: 'incomplete' };
    expect(decode(synthesizeResponsesEvents(json).join('')).at(-1)!.event).toBe('response.incomplete');
  });

  it('requires model and input (string or array), in the OpenAI error shape', () => {
    expect(responsesDialect.validate({ model: 'gpt-4.1', input: 'hi' })).toEqual({ ok: true });
    expect(responsesDialect.validate({ model: 'gpt-4.1', input: [{ role: 'user', content: 'hi' }] })).toEqual({
      ok: true,
    });
    // OpenAI's rules: input is optional; the model may come from a stored prompt.
    expect(responsesDialect.validate({ model: 'gpt-4.1' })).toEqual({ ok: true });
    expect(responsesDialect.validate({ prompt: { id: 'pmpt_1' } })).toEqual({ ok: true });
    expect(responsesDialect.validate({ model: 'gpt-4.1', conversation: 'conv_1' })).toEqual({ ok: true });
    expect(responsesDialect.validate({ model: 'gpt-4.1', conversation: { id: 'conv_1' } })).toEqual({ ok: true });
    expect(responsesDialect.validate({ model: 'gpt-4.1', previous_response_id: 'resp_1' })).toEqual({ ok: true });
    expect(responsesDialect.validate({ input: 'hi' })).toMatchObject({ ok: false, param: 'model' });
    expect(responsesDialect.validate({ model: 'gpt-4.1', conversation: 7 })).toMatchObject({
      ok: false,
      param: 'conversation',
    });
    expect(responsesDialect.validate({ model: 'gpt-4.1', input: 42 })).toMatchObject({ ok: false, param: 'input' });
    expect(
      JSON.parse(responsesDialect.errorBody({ status: 400, message: 'input: Field required', param: 'input' })),
    ).toEqual({
      error: { message: 'input: Field required', type: 'invalid_request_error', param: 'input', code: null },
    });
  });

  it('a request continuing a stored conversation never uses the cache', () => {
    expect(responsesDialect.cache!.allowed({ model: 'm', input: 'x' })).toBe(true);
    expect(responsesDialect.cache!.allowed({ model: 'm', input: 'x', previous_response_id: 'resp_1' })).toBe(false);
  });
});

describe('embeddings', () => {
  it('requires model and input', () => {
    expect(embeddingsDialect.validate({ model: 'text-embedding-3-small', input: ['a', 'b'] })).toEqual({ ok: true });
    expect(embeddingsDialect.validate({ model: 'text-embedding-3-small' })).toMatchObject({
      ok: false,
      param: 'input',
    });
  });
});
