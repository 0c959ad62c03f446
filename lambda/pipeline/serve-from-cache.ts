import { replayRequestFor } from '../cache/replay';
import type { Deps } from '../deps';
import { ProxyError } from '../errors';
import { finishResponse } from './finish-response';
import { recordUsage } from './record';
import type { Admitted, CacheConsulted } from './state';
import { Answer, type Step } from './step';

/**
 * Step 9 (opt-in, docs/caching.md): asks the cache whether to serve this
 * request. A hit is answered here and recorded when its body ends; otherwise the
 * request goes on to the provider with the cache's fill, which stores the answer.
 */
export function serveFromCache(deps: Pick<Deps, 'cache' | 'prices' | 'rowWriter'>): Step<Admitted, CacheConsulted> {
  return {
    name: 'cache',
    async run(state, reads) {
      const replay = replayRequestFor({
        dialect: state.endpoint.dialect,
        stream: state.stream,
        body: state.body,
        streamUsage: state.provider.streamUsage,
      });
      const decision = await deps.cache.consult(state.cache, reads.cachedResponse, replay, {
        requestId: state.request.id,
        track: (work) => state.work.add(work),
        // Priced as the row is: the answer's model, else the one the request named (in the path, for Bedrock).
        costNanos: (model, usage) =>
          deps.prices.cost(model ?? requestedModel(state), usage, {
            provider: state.provider.id,
            at: state.request.receivedAt,
          }).nanos,
      });
      if ('fill' in decision) return { cacheFill: decision.fill };
      if ('failed' in decision) {
        // The identical request this one waited for met this error at its provider: the same answer, and its own row.
        recordUsage(deps, state, { status: errorStatus(decision.failed), error: decision.failed.message });
        throw decision.failed;
      }
      const { entry, statusCode, headers, body } = decision.hit;
      let recorded = false;
      const record = () => {
        if (recorded) return;
        recorded = true;
        recordUsage(deps, state, { status: entry.status, model: entry.model, cached: { savedNanos: entry.costNanos } });
      };
      body.once('end', record);
      body.once('close', record);
      return new Answer(finishResponse(state, { statusCode, headers, body }));
    },
  };
}

function errorStatus(error: Error): number {
  return error instanceof ProxyError ? error.status : 502;
}

function requestedModel(state: Admitted): string | undefined {
  const named = state.pathModel ?? state.body?.model;
  return typeof named === 'string' ? named : undefined;
}
