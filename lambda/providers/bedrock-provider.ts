import type { CatalogEntry } from './catalog';
import { converseDialect } from './dialects/converse';
import { invokeDialect } from './dialects/invoke';
import { passthroughDialect } from './dialects/passthrough';
import type { Endpoint, ProviderModule } from './types';

type BedrockEntry = Extract<CatalogEntry, { dialect: 'bedrock-runtime' }>;

/** The Bedrock Runtime endpoints, below the regional base URL; the model id (or URL-encoded ARN) is a path segment. */
const BEDROCK_ENDPOINTS = {
  converse: { kind: 'converse', method: 'POST', path: '/model/{model}/converse', dialect: converseDialect },
  'converse-stream': {
    kind: 'converse',
    method: 'POST',
    path: '/model/{model}/converse-stream',
    dialect: converseDialect,
    streams: true,
  },
  invoke: { kind: 'invoke', method: 'POST', path: '/model/{model}/invoke', dialect: invokeDialect },
  'invoke-with-response-stream': {
    kind: 'invoke',
    method: 'POST',
    path: '/model/{model}/invoke-with-response-stream',
    dialect: invokeDialect,
    streams: true,
  },
  // CountTokens is free: its row has cost 0, priced.
  'count-tokens': {
    kind: 'count_tokens',
    method: 'POST',
    path: '/model/{model}/count-tokens',
    dialect: passthroughDialect(converseDialect, 'free'),
  },
} as const satisfies Record<BedrockEntry['endpoints'][number], Endpoint>;

/**
 * A Bedrock Runtime provider from its catalog entry: `{sdkBasePath}/…` is the runtime API's root, so
 * an AWS SDK client whose `endpoint` points there reaches the operations above. Nothing else is
 * forwarded (docs/bedrock.md, "Endpoints"): the proxy signs with the stack's own AWS credentials, so
 * an operation it does not meter (asynchronous invocations, guardrails) or no operation at all
 * must not go out under them; IAM would be the only guard.
 */
export function bedrockProvider<const Id extends string>(entry: BedrockEntry & { id: Id }): ProviderModule<Id> {
  return {
    id: entry.id,
    displayName: entry.displayName,
    dialect: converseDialect,
    upstream: entry.upstream,
    endpoints: entry.endpoints.map((kind) => BEDROCK_ENDPOINTS[kind]),
    mounts: [{ prefix: entry.sdkBasePath, upstreamPrefix: '', othersRefused: true }],
    streamUsage: entry.streamUsage,
    exampleModel: entry.exampleModel,
    prices: entry.prices,
  };
}
