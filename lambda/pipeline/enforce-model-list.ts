import { modelAllowed, modelRefusal } from '../auth/token-limits';
import { ModelNotAllowedError } from '../base/errors';
import type { Authenticated, Identified, ModelAllowed, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 6: a token with a model list (docs/tags.md, "Per-token limits") may call only the models
 * on it. Anything else is a 403 in the endpoint's own error shape, logged as a row (pipeline.ts), and never
 * forwarded nor served from the cache. The list came with the gate's answer: no store call here.
 */
export function enforceModelList(): Step<Routed & Identified & Authenticated & Validated, ModelAllowed> {
  return {
    name: 'model list',
    run(state) {
      const { limits } = state.gate.record;
      // A provider that names the model in the path (docs/bedrock.md) is held to the list by that name.
      const model = state.pathModel ?? state.body?.model;
      if (!limits || modelAllowed(limits, state.endpoint.kind, model)) return { modelAllowed: true };
      throw new ModelNotAllowedError(modelRefusal(limits, model));
    },
  };
}
