import { defaultsKey } from '../account-settings/failover-settings';
import { modelAllowed, modelRefusal } from '../auth/token-limits';
import { ModelNotAllowedError, StoreUnavailableError, ValidationError } from '../base/errors';
import { planFailover } from '../upstream/fallbacks';
import { requirePriced } from './priced-under-budget';
import type { Authenticated, Budgeted, FailoverPlanned, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 7b: the fallbacks `x-proxy-fallback` names, or else the token's or the account's defaults for
 * the model asked for (the token's ride on its gate record, the account's come from the instance's short
 * cache: no read of their own), held to the same rules as the model the request names before anything
 * is sent: each fallback must be on the token's model list, and priced when a budget binds the request
 * (each attempt is then counted at its own target's price).
 */
export function planFallbacks(): Step<Routed & Authenticated & Validated & Budgeted, FailoverPlanned> {
  return {
    name: 'fallbacks',
    async run(state, reads) {
      const account = await reads.accountSettings.catch((error: unknown) => {
        throw new StoreUnavailableError(error);
      });
      const asked = state.pathModel ?? state.body?.model;
      const model = typeof asked === 'string' ? asked : '';
      const key = defaultsKey(state.provider.id, model);
      const { limits, fallbacks: tokenDefaults } = state.gate.record;
      const planned = planFailover({
        headers: state.request.headers,
        mode: state.mode,
        primary: { provider: state.provider, endpoint: state.endpoint, model, upstreamPath: state.upstreamPath },
        defaults: {
          token: tokenDefaults?.[key],
          account: account.fallbacks[key],
          firstTokenMs: account.firstTokenMs,
          stallMs: account.stallMs,
        },
      });
      if (!planned.ok) throw new ValidationError(planned.message, planned.param);
      for (const target of planned.plan.targets.slice(1)) {
        if (limits && !modelAllowed(limits, target.endpoint.kind, target.model))
          throw new ModelNotAllowedError(`Fallback: ${modelRefusal(limits, target.model)}`);
        requirePriced(state.budgets, state.prices, target, 'Fallback: ');
      }
      return { failover: planned.plan };
    },
  };
}
