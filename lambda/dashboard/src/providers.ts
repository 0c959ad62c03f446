import { DIALECT_SDK, PROVIDER_CATALOG } from '../../providers/catalog';
import type { ProviderId } from './types';

export interface ProviderInfo {
  id: ProviderId;
  name: string;
  /** Which official SDK a client uses to reach this provider through the proxy. */
  sdk: 'anthropic' | 'openai' | 'aws';
  /** Path below the proxy base that the SDK's `baseURL` points at. */
  basePath: string;
  /** A model id for the snippets. */
  exampleModel: string;
  /** Chart colour; chosen to stay distinguishable for common colour-vision deficiencies. */
  color: string;
  /** Reached through AWS: without a saved key, the proxy signs requests with its own AWS role (docs/bedrock.md). */
  signsWithRole: boolean;
}

/** The provider catalog as the dashboard shows it (the catalog is plain data, so the bundle stays free of server code). */
export const PROVIDERS: readonly ProviderInfo[] = PROVIDER_CATALOG.map((entry) => ({
  id: entry.id,
  name: entry.displayName,
  sdk: DIALECT_SDK[entry.dialect],
  basePath: entry.sdkBasePath,
  exampleModel: entry.exampleModel,
  color: entry.chartColor,
  signsWithRole: 'aws' in entry.upstream,
}));

const byId = new Map<string, ProviderInfo>(PROVIDERS.map((p) => [p.id, p]));

/** Ids the catalog no longer has (rows of a removed provider) are shown as they are. */
export function providerName(id: string): string {
  return byId.get(id)?.name ?? id;
}

export function providerColor(id: string): string {
  return byId.get(id)?.color ?? '#6b7280';
}
