import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { CachedResponse, CacheWriter } from '../cache/response-cache';
import type { Deps } from '../deps';
import { describeError } from '../logger';
import type { ProxyResponse } from '../http/response';
import { asObject } from '../json';
import { replayCached } from '../streaming/replay';
import { finishResponse } from './finish-response';
import { pipelineData, proxyState, type Middleware } from './middy-types';
import { recordUsage } from './record';
import type { ProxyState } from './state';

const CACHE_STATUS = { 'read-write': 'MISS', refresh: 'REFRESH' } as const;

export function cacheStatusHeader(state: ProxyState): Record<string, string> {
  return state.cache.mode === 'off' ? {} : { 'x-proxy-cache': CACHE_STATUS[state.cache.mode] };
}

/** A client that didn't ask for stream usage never saw the usage-only event the proxy asked for. */
function clientAskedForStreamUsage(state: ProxyState): boolean {
  return asObject(state.body?.stream_options)?.include_usage === true;
}

/**
 * Step 8 (opt-in, docs/behaviour.md "Cache"): with `x-proxy-cache: true` a stored answer is
 * returned without calling the provider; identical requests already in flight
 * on this instance wait for the first one's answer instead of calling too.
 */
export function serveFromCache(deps: Deps): Middleware {
  return {
    before: async function serveFromCache(request): Promise<ProxyResponse | void> {
      const state = proxyState(request.event);
      const key = state.cache.key;
      if (state.cache.mode !== 'read-write' || !key) return;
      const stored = await state.lookups?.cachedResponse;
      if (stored) return respondWithHit(deps, request.event, state, stored);
      const flight = deps.inFlight.join(key);
      if (flight.leader) {
        state.cache.flight = flight;
        return;
      }
      const shared = await flight.result;
      if (shared) return respondWithHit(deps, request.event, state, shared);
    },
  };
}

function respondWithHit(deps: Deps, event: APIGatewayProxyEventV2, state: ProxyState, entry: CachedResponse): ProxyResponse {
  const clientAskedForUsage = clientAskedForStreamUsage(state);
  const hideUsageOnlyEvent = state.provider.streamUsage === 'when-asked' && !clientAskedForUsage;
  const { contentType, body } = replayCached(entry, { dialect: state.endpoint.dialect, stream: state.stream, hideUsageOnlyEvent, clientAskedForUsage });
  let recorded = false;
  const record = () => {
    if (recorded) return;
    recorded = true;
    recordUsage(deps, state, { status: entry.status, model: entry.model, cached: { savedNanos: entry.costNanos } });
  };
  body.once('end', record);
  body.once('close', record);
  return finishResponse(pipelineData(event), {
    statusCode: entry.status,
    headers: { 'content-type': contentType, 'x-proxy-cache': 'HIT' },
    body,
  });
}

/**
 * Stores a 2xx answer as it streams (refresh replaces the entry). On commit the
 * waiting identical requests are served the same answer from memory.
 */
export function openCacheWriter(deps: Deps, state: ProxyState): CacheWriter | undefined {
  const key = state.cache.key;
  if (state.cache.mode === 'off' || !key) return undefined;
  const now = deps.now();
  const store = deps.responseCache.open(key, state.cache.ttlSeconds, now);
  const flight = state.cache.flight;
  const chunks: string[] | undefined = flight ? [] : undefined;
  return {
    append(text) {
      store.append(text);
      chunks?.push(text);
    },
    async commit(meta) {
      await store.commit(meta).catch((error) => deps.log.warn('response not cached', { request_id: state.request.id, ...describeError(error) }));
      // Followers are released once the entry is visible, so no identical request slips in between.
      // With max-age=0 nothing is stored, and nothing is shared either.
      if (state.cache.ttlSeconds > 0) flight?.complete({ ...meta, body: chunks!.join('') });
      else flight?.fail();
    },
    abort() {
      store.abort();
      flight?.fail();
    },
  };
}

export function abandonCacheFlight(state: ProxyState): void {
  state.cache.flight?.fail();
  state.cache.flight = undefined;
}
