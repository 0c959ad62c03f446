import type { CatalogEntry } from './catalog';
import { converseDialect } from './dialects/converse';
import { invokeDialect } from './dialects/invoke';
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
} as const satisfies Record<BedrockEntry['endpoints'][number], Endpoint>;

/**
 * A Bedrock Runtime provider from its catalog entry: `{sdkBasePath}/…` is the runtime API's root, so
 * an AWS SDK client whose `endpoint` points there reaches every operation; paths that are not one of
 * the endpoints above are forwarded as `other`.
 */
export function bedrockProvider<const Id extends string>(entry: BedrockEntry & { id: Id }): ProviderModule<Id> {
  return {
    id: entry.id,
    displayName: entry.displayName,
    dialect: converseDialect,
    upstream: entry.upstream,
    endpoints: entry.endpoints.map((kind) => BEDROCK_ENDPOINTS[kind]),
    mounts: [{ prefix: entry.sdkBasePath, upstreamPrefix: '' }],
    streamUsage: entry.streamUsage,
    exampleModel: entry.exampleModel,
    prices: entry.prices,
  };
}
