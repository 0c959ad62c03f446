import { modelAllowed, modelRefusal } from '../auth/token-limits';
import { ModelNotAllowedError, ValidationError } from '../base/errors';
import { planFailover } from '../upstream/fallbacks';
import { requirePriced } from './priced-under-budget';
import type { Authenticated, Budgeted, FailoverPlanned, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 7b: `x-proxy-fallback` read and held to the same rules as the model the request names,
 * before anything is sent: each fallback must be on the token's model list, and priced when a
 * budget binds the request (each attempt is then counted at its own target's price).
 */
export function planFallbacks(): Step<Routed & Authenticated & Validated & Budgeted, FailoverPlanned> {
  return {
    name: 'fallbacks',
    run(state) {
      const model = state.pathModel ?? state.body?.model;
      const planned = planFailover({
        headers: state.request.headers,
        mode: state.mode,
        primary: {
          provider: state.provider,
          endpoint: state.endpoint,
          model: typeof model === 'string' ? model : '',
          upstreamPath: state.upstreamPath,
        },
      });
      if (!planned.ok) throw new ValidationError(planned.message, planned.param);
      const { limits } = state.gate.record;
      for (const target of planned.plan.targets.slice(1)) {
        if (limits && !modelAllowed(limits, target.endpoint.kind, target.model))
          throw new ModelNotAllowedError(`Fallback: ${modelRefusal(limits, target.model)}`);
        requirePriced(state.budgets, state.prices, target, 'Fallback: ');
      }
      return { failover: planned.plan };
    },
  };
}
