import type { Readable } from 'node:stream';
import { UpstreamTimeoutError } from '../base/errors';
import { describeError, type Logger } from '../base/logger';
import { CacheFill, type FillContext } from './cache-fill';
import { cacheStatusHeader, forwardedStatus } from './cache-mode';
import type { CacheRequest } from './cache-request';
import { replayCached, type ReplayRequest } from './replay';
import type { CachedResponse, ResponseCache } from './response-cache';
import type { LeaderFlight, SingleFlight } from './single-flight';

export interface ProxyCacheDeps {
  store: ResponseCache;
  /**
   * Lets identical requests in flight together share one upstream call. Only worth having
   * where one process serves several requests at once (the local server): a Lambda
   * instance runs one invocation at a time, so it would only ever lead, and hold each
   * answer's body in memory for followers that never come.
   */
  flights?: SingleFlight<CachedResponse>;
  log: Logger;
  /** Epoch ms. */
  now: () => number;
}

/** A stored answer in the form the request asked for, ready to send. */
export interface CacheHit {
  entry: CachedResponse;
  statusCode: number;
  headers: Record<string, string>;
  body: Readable;
}

/**
 * Serve from the cache, forward and hand the provider's answer to the fill, or answer with the
 * error an identical request in flight just met (its provider timed out or was unreachable).
 */
export type CacheDecision = { hit: CacheHit } | { fill: CacheFill } | { failed: Error };

/**
 * The response cache as one feature (docs/caching.md): the lookup that rides
 * with the request's other store reads, the decision to serve or forward, and the fill
 * that stores a forwarded answer. The pipeline asks it, and nothing else about caching.
 */
export class ProxyCache {
  constructor(private readonly deps: ProxyCacheDeps) {}

  /**
   * The stored entry for a `read-write` request, started together with the request's
   * other store reads so it costs no round trip of its own. A failed read is a miss: the
   * provider answers, as if nothing were cached.
   */
  lookup(request: CacheRequest, now: number): Promise<CachedResponse | undefined> | undefined {
    if (request.mode !== 'read-write' || !request.key) return undefined;
    return this.deps.store.get(request.key, now).catch((error: unknown) => {
      this.deps.log.warn('cache not read; the request goes to the provider', describeError(error));
      return undefined;
    });
  }

  /**
   * Serve or not. A `read-write` request is answered from the entry `lookup` found, or
   * from an identical request in flight; otherwise it goes to the provider, and the fill
   * stores the answer (`refresh` replaces the entry without reading it).
   */
  async consult(
    request: CacheRequest,
    lookup: Promise<CachedResponse | undefined> | undefined,
    replay: ReplayRequest,
    context: FillContext,
  ): Promise<CacheDecision> {
    if (request.mode !== 'read-write' || !request.key) return { fill: this.fillFor(request, context) };
    const stored = await lookup;
    const hit = stored && hitFor(stored, replay);
    if (hit) return { hit };
    const { flights } = this.deps;
    const joined = flights?.join(request.key);
    if (!flights || !joined) return { fill: this.fillFor(request, context) };
    if (joined.leader) return { fill: this.fillFor(request, context, { flight: joined }) };
    // An identical request is in flight: its answer, its provider's failure, or a call of our own within our own limit.
    const outcome = await joined.outcome;
    switch (outcome.kind) {
      case 'answer': {
        // An answer that can't be given in the form asked for leaves this request a plain miss, with its whole limit.
        const shared = hitFor(outcome.value, replay);
        return shared ? { hit: shared } : { fill: this.fillFor(request, context) };
      }
      case 'failed':
        return { failed: outcome.error };
      case 'timed-out':
        return { failed: new UpstreamTimeoutError(flights.timeLimitMs) };
      case 'forward':
        return { fill: this.fillFor(request, context, { flight: outcome.flight, timeLimitMs: outcome.timeLeftMs }) };
    }
  }

  private fillFor(
    request: CacheRequest,
    context: FillContext,
    flying: { flight?: LeaderFlight<CachedResponse>; timeLimitMs?: number } = {},
  ): CacheFill {
    const { key, ttlSeconds } = request;
    const { store, log, now } = this.deps;
    const open = request.mode !== 'off' && key ? () => store.open(key, ttlSeconds, now()) : undefined;
    return new CacheFill(
      { status: forwardedStatus(request.mode, request.bypass), open, ttlSeconds, ...flying },
      context,
      log,
      now,
    );
  }
}

/** Undefined when the stored answer can't be given exactly in the form asked for: a miss (docs/caching.md). */
function hitFor(entry: CachedResponse, replay: ReplayRequest): CacheHit | undefined {
  const replayed = replayCached(entry, replay);
  if (!replayed) return undefined;
  const { contentType, body } = replayed;
  return {
    entry,
    statusCode: entry.status,
    headers: { 'content-type': contentType, ...cacheStatusHeader('HIT') },
    body,
  };
}
