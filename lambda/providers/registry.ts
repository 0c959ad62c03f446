import { PROVIDER_CATALOG, type ProviderEntry, type ProviderId } from './catalog';
import { bedrockProvider } from './bedrock-provider';
import { chatCompletionsProvider } from './chat-completions-provider';
import { messagesProvider } from './messages-provider';
import { routeTable, type ProxyRoute, type RouteResult } from './routes';
import type { Mount, ProviderModule } from './types';

export type { ProviderId };
export type Provider = ProviderModule<ProviderId>;

/** Each dialect turns a catalog entry into routes and wire formats: written once per API style. */
function build(entry: ProviderEntry): Provider {
  switch (entry.dialect) {
    case 'messages':
      return messagesProvider(entry);
    case 'chat':
      return chatCompletionsProvider(entry);
    case 'bedrock-runtime':
      return bedrockProvider(entry);
  }
}

/** The runtime form of every provider in the catalog (`catalog.ts`), in the catalog's order. */
export const PROVIDERS: readonly Provider[] = PROVIDER_CATALOG.map(build);
export type Route = ProxyRoute<Provider>;

const byId = new Map<string, Provider>(PROVIDERS.map((p) => [p.id, p]));
const resolve = routeTable<Provider>(PROVIDERS);

export function providerById(id: string): Provider | undefined {
  return byId.get(id);
}

/** Where a path below the proxy base (`/api/proxy`) leads for this method. */
export function resolveProxyPath(pathBelowProxyBase: string, method: string): RouteResult<Provider> {
  return resolve(pathBelowProxyBase, method);
}

/** The provider whose main endpoint answers at a path below the proxy base, if any. */
export function providerByRoute(pathBelowProxyBase: string): Provider | undefined {
  const result = resolve(pathBelowProxyBase, 'POST');
  return result && 'found' in result && result.found.endpoint === result.found.provider.endpoints[0]
    ? result.found.provider
    : undefined;
}

/** Every endpoint path the proxy offers, below the proxy base, for the 404 answer and docs/api.md. */
export function endpointPaths(): string[] {
  return PROVIDERS.flatMap((provider) => {
    const mounts: readonly Mount[] = provider.mounts;
    const mount = mounts.find(
      (m) => !m.endpointsOnly && provider.endpoints.every((e) => e.path.startsWith(m.upstreamPrefix)),
    );
    return provider.endpoints.map(
      (endpoint) =>
        `${endpoint.method} ${mount ? mount.prefix + endpoint.path.slice(mount.upstreamPrefix.length) : endpoint.path}`,
    );
  });
}

/**
 * The upstream URL for a path below the provider's base (from the configuration, no trailing
 * slash), with the client's query string as sent. Only configuration decides the host; the result is checked to
 * stay below the base URL.
 */
export function upstreamUrl(
  provider: Provider,
  base: string,
  path: string = provider.endpoints[0].path,
  rawQuery = '',
): URL {
  const url = new URL(base + path + (rawQuery ? `?${rawQuery}` : ''));
  const root = new URL(base);
  if (url.origin !== root.origin || !url.pathname.startsWith(root.pathname.replace(/\/+$/, '')))
    throw new Error(`path escapes the base URL of ${provider.id}`);
  return url;
}
