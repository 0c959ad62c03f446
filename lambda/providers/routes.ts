import { passthroughDialect } from './dialects/passthrough';
import type { Endpoint, Mount, ProviderModule } from './types';

/** Where a proxy path leads: the provider, the endpoint (or `other`), and the path below the provider's base URL. */
export interface ProxyRoute<P extends ProviderModule = ProviderModule> {
  provider: P;
  endpoint: Endpoint;
  upstreamPath: string;
}

export type RouteResult<P extends ProviderModule> =
  | { found: ProxyRoute<P> }
  /** The path is an endpoint of `provider`, but not for this method. */
  | { wrongMethod: { provider: P; allowed: string } }
  /** Under a provider's mount, but not a path the proxy will forward (traversal, encoded separators…). */
  | { unsafe: { provider: P } }
  | undefined;

// A percent-encoded byte must not smuggle in a separator, a dot segment, a
// query, a fragment, userinfo, a second encoding, or a control character.
const FORBIDDEN_ENCODED = /%(?:2[ef35f]|5c|3f|40|25|[01][0-9a-f]|7f)/i;
const SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})+$/;

/**
 * A path below a mount is forwarded only if every segment is plain: no empty,
 * `.` or `..` segments, no `@`, backslashes or encoded separators, so the
 * upstream URL can only ever be the provider's base URL plus this path.
 */
export function isSafeSubPath(path: string): boolean {
  if (!path.startsWith('/') || path.length > 2048) return false;
  const segments = path.slice(1).split('/');
  return segments.every((segment) => segment !== '.' && segment !== '..' && SEGMENT.test(segment) && !FORBIDDEN_ENCODED.test(segment));
}

/** Builds the route table once from the providers' data: mounts longest first, endpoints by upstream path. */
export function routeTable<P extends ProviderModule>(providers: readonly P[]) {
  const mounts = providers
    .flatMap((provider) => provider.mounts.map((mount) => ({ provider, mount })))
    .sort((a, b) => b.mount.prefix.length - a.mount.prefix.length);
  const other = new Map<P, Endpoint['dialect']>(providers.map((p) => [p, passthroughDialect(p.dialect, 'tokens')]));

  function under(mount: Mount, path: string): string | undefined {
    return path.startsWith(`${mount.prefix}/`) ? path.slice(mount.prefix.length) : undefined;
  }

  return function resolve(path: string, method: string): RouteResult<P> {
    for (const { provider, mount } of mounts) {
      const rest = under(mount, path);
      if (rest === undefined) continue;
      if (!isSafeSubPath(rest)) {
        if (mount.endpointsOnly) continue;
        return { unsafe: { provider } };
      }
      const upstreamPath = mount.upstreamPrefix + rest;
      const endpoint = provider.endpoints.find((e) => e.path === upstreamPath);
      if (endpoint) {
        return endpoint.method === method ? { found: { provider, endpoint, upstreamPath } } : { wrongMethod: { provider, allowed: endpoint.method } };
      }
      if (mount.endpointsOnly) continue;
      return { found: { provider, endpoint: { kind: 'other', method, path: upstreamPath, dialect: other.get(provider)! }, upstreamPath } };
    }
    return undefined;
  };
}
