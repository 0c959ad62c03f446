/** Plain-fetch helpers for talking to a fake upstream directly in tests. */
import type { Usage } from '../../lambda/providers/usage';
import { splitSseBlocks } from '../fixtures/index';
import type { FakeUpstream } from './fake-upstream';

export function callFake(
  fake: FakeUpstream,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
) {
  return fetch(`${fake.origin}${fake.endpointPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

export type Json = Record<string, unknown>;

/** Reads a nested field without caring whether the levels above exist. */
export function at(value: unknown, ...path: Array<string | number>): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** The JSON payloads of a stream's events (the `[DONE]` marker is skipped). */
export function streamPayloads(text: string): Json[] {
  return splitSseBlocks(text)
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data) as Json);
}

/** Reads usage the plain way: the last usage object wins; message_delta is overlaid on message_start. */
export function usageOf(payloads: Json[]): Usage {
  let usage: Json = {};
  for (const payload of payloads) {
    if (payload.type === 'message_start') usage = { ...(at(payload, 'message', 'usage') as Json) };
    else if (payload.type === 'message_delta') usage = { ...usage, ...(payload.usage as Json) };
    else if (payload.type === undefined)
      usage = ((payload.usage ?? at(payload, 'x_groq', 'usage')) as Json | undefined) ?? usage;
  }
  if ('input_tokens' in usage) {
    const read = num(usage.cache_read_input_tokens);
    const write = num(usage.cache_creation_input_tokens);
    return {
      inputTokens: num(usage.input_tokens) + read + write,
      outputTokens: num(usage.output_tokens),
      cacheReadTokens: read,
      cacheWriteTokens: write,
    };
  }
  return {
    inputTokens: num(usage.prompt_tokens),
    outputTokens: num(usage.completion_tokens),
    cacheReadTokens: num(at(usage, 'prompt_tokens_details', 'cached_tokens')) || num(usage.prompt_cache_hit_tokens),
    cacheWriteTokens: 0,
  };
}
