/**
 * The response cache port. The pipeline talks to this interface only; the
 * DynamoDB adapter lives in `dynamodb/cache-store.ts`.
 */
import type { Usage } from '../providers/usage';

export interface CachedResponse {
  /** How the provider answered: one JSON body, an SSE stream, or an AWS event stream. */
  format: 'json' | 'sse' | 'eventstream';
  /** Only 2xx responses are stored. */
  status: number;
  contentType: string;
  /** The exact bytes the client received, as UTF-8 text (for `sse`: the raw event stream; for `eventstream`: one base64 line per binary frame). */
  body: string;
  model?: string;
  /** The original response's usage, so a hit can report what it saved. */
  usage: Usage;
  /** The original response's cost in nano-USD (`saved_usd` of a hit). */
  costNanos: number;
  /** Epoch milliseconds. */
  storedAt: number;
}

export type CachedResponseMeta = Omit<CachedResponse, 'body'>;

/**
 * Stores one response as it arrives. A streamed response is handed over chunk by
 * chunk and becomes visible only on `commit`; until then readers keep seeing the
 * previous entry (or a miss).
 */
export interface CacheWriter {
  /** Synchronous and never throws: the adapter buffers and writes parts in the background. */
  append(chunk: string): void;
  /**
   * Makes the entry visible. Resolves once readers can see it; rejects with a
   * `CacheWriteError` when it could not be stored (too large, not 2xx, store failure,
   * already aborted). A rejection never affects the response already sent.
   */
  commit(meta: CachedResponseMeta): Promise<void>;
  /** The stream was cut off, the upstream failed or the client left: nothing becomes visible. */
  abort(): void;
}

export interface ResponseCache {
  /** The entry stored under `key`, or undefined when there is none, or it is expired, partial or corrupt. */
  get(key: string, now: number): Promise<CachedResponse | undefined>;
  /** Starts storing a response that expires `ttlSeconds` after `now` (epoch ms). A TTL of 0 stores nothing. */
  open(key: string, ttlSeconds: number, now: number): CacheWriter;
}

/** Why a response was not stored. The caller logs it; the client is never affected. */
export class CacheWriteError extends Error {
  override readonly name = 'CacheWriteError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Whether a response may be stored at all: only complete 2xx responses (docs/caching.md, "What is stored"). */
export function isCacheableStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status < 300;
}
