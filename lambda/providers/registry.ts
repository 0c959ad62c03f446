import { provA } from './prov-a';
import { provB } from './prov-b';
import { provC } from './prov-c';
import { provD } from './prov-d';
import { provE } from './prov-e';
import type { ProviderModule } from './types';

/** The one list of providers. Adding a provider means adding a module here and nothing else. */
export const PROVIDERS = [provA, provB, provC, provD, provE] as const;

export type ProviderId = (typeof PROVIDERS)[number]['id'];
export type Provider = ProviderModule<ProviderId>;

const byId = new Map<string, Provider>(PROVIDERS.map((p) => [p.id, p]));
const byRoute = new Map<string, Provider>(PROVIDERS.flatMap((p) => p.routes.map((r) => [r, p] as const)));

export function providerById(id: string): Provider | undefined {
  return byId.get(id);
}

/** The provider answering at a path below the proxy base (`/api/proxy`), if any. */
export function providerByRoute(pathBelowProxyBase: string): Provider | undefined {
  return byRoute.get(pathBelowProxyBase);
}

/** The upstream endpoint, honouring the provider's base-URL override. Only configuration decides it. */
export function upstreamUrl(provider: Provider, env: NodeJS.ProcessEnv): URL {
  const base = (env[provider.upstream.envVar] || provider.upstream.baseUrl).replace(/\/+$/, '');
  return new URL(base + provider.upstream.path);
}
