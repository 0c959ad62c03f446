/**
 * JSON read with every number kept as the text it was written as. `JSON.parse` turns
 * `9007199254740993` into `9007199254740992` and `1.0` into `1`; a provider may read them
 * apart (an integer seed beyond 2^53, an integer where a float is expected), so the cache key
 * must too (docs/caching.md, "The key").
 */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** What `JSON.parse`'s reviver is given since ES2025 (Node 22): the source text of a primitive. */
interface ReviverContext {
  source?: string;
}

/** Parses JSON text (throws as `JSON.parse` does); numbers become `JsonNumber`s holding their literal text. */
export function parseExactJson(text: string): unknown {
  const revive = (_key: string, value: unknown, context?: ReviverContext): unknown =>
    typeof value === 'number' ? new JsonNumber(context?.source ?? JSON.stringify(value)) : value;
  return JSON.parse(text, revive) as unknown;
}
