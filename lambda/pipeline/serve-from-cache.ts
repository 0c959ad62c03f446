import { replayRequestFor } from '../cache/replay';
import type { Deps } from '../wiring/deps';
import type { Completion } from '../usage/build-row';
import { SharedForwardFailure } from '../base/errors';
import { finishResponse } from './finish-response';
import type { Admitted, CacheConsulted } from './state';
import { Answer, type Step } from './step';

/**
 * Step 9 (opt-in, docs/caching.md): asks the cache whether to serve this
 * request. A hit is answered here, its row recorded (pipeline.ts) when its body ends; otherwise the
 * request goes on to the provider with the cache's fill, which stores the answer.
 */
export function serveFromCache(deps: Pick<Deps, 'cache'>): Step<Admitted, CacheConsulted> {
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
          state.prices.cost(model ?? requestedModel(state), usage, {
            provider: state.provider.id,
            at: state.request.receivedAt,
          }).nanos,
      });
      if ('fill' in decision) return { cacheFill: decision.fill };
      if ('failed' in decision) {
        // The identical request this one waited for met this error at its provider: the same answer, and its own row.
        throw new SharedForwardFailure(decision.failed);
      }
      const { entry, statusCode, headers, body } = decision.hit;
      const ended = new Promise<Completion>((resolve) => {
        const settle = () =>
          resolve({ status: entry.status, model: entry.model, cached: { savedNanos: entry.costNanos } });
        body.once('end', settle);
        body.once('close', settle);
      });
      return new Answer(finishResponse(state, { statusCode, headers, body }), ended);
    },
  };
}

function requestedModel(state: Admitted): string | undefined {
  const named = state.pathModel ?? state.body?.model;
  return typeof named === 'string' ? named : undefined;
}
