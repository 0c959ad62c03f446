import { passthroughDialect } from './dialects/passthrough';
import type { Endpoint, Mount, ProviderModule } from './types';

/** Where a proxy path leads: the provider, the endpoint (or `other`), and the path below the provider's base URL. */
export interface ProxyRoute<P extends ProviderModule = ProviderModule> {
  provider: P;
  endpoint: Endpoint;
  upstreamPath: string;
  /** The model the path names (an endpoint with a `{model}` segment), decoded. */
  model?: string;
}

export type RouteResult<P extends ProviderModule> =
  | { found: ProxyRoute<P> }
  /** The path is an endpoint of `provider`, but not for this method. */
  | { wrongMethod: { provider: P; allowed: string } }
  /** Under a provider's mount, but not a path the proxy will forward (traversal, encoded separators…). */
  | { unsafe: { provider: P } }
  /** Under a mount that reaches only the provider's endpoints, and not one of them. */
  | { notOffered: { provider: P } }
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
  return segments.every(
    (segment) => segment !== '.' && segment !== '..' && SEGMENT.test(segment) && !FORBIDDEN_ENCODED.test(segment),
  );
}

const MODEL_SEGMENT = '{model}';
const ENCODED_MODEL = /^(?:[A-Za-z0-9\-._~:]|%[0-9A-Fa-f]{2}){1,2048}$/;
/** A model id, an inference profile id, or an ARN (whose `/` is sent encoded, as `%2F`). */
const MODEL_ID = /^[A-Za-z0-9\-._:/]+$/;

/**
 * The model a `{model}` segment names, when the segment is one: plain characters or
 * percent-encoded ones that decode to a model id or ARN. A `/` is allowed only encoded and only
 * inside an ARN-like id, never as a `.`/`..` segment, so the upstream path keeps its shape.
 */
function modelOf(segment: string): string | undefined {
  if (!ENCODED_MODEL.test(segment)) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return isModelId(model) ? model : undefined;
}

/** A model id fit for a path's `{model}` segment: no `.`/`..` part, nothing that would change the path's shape once encoded. */
export function isModelId(model: string): boolean {
  return MODEL_ID.test(model) && !model.split('/').some((part) => part === '' || part === '.' || part === '..');
}

/**
 * How a path meets an endpoint template (`/model/{model}/converse`): not at all, with the model its
 * `{model}` segment names, or in shape only, with a model segment that is no model id.
 */
function matchTemplate(template: string, path: string): { model: string } | 'bad model' | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  let modelAt = -1;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === MODEL_SEGMENT) modelAt = i;
    else if (want[i] !== got[i]) return undefined;
  }
  if (modelAt < 0) return undefined;
  const model = modelOf(got[modelAt]);
  return model === undefined ? 'bad model' : { model };
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
      for (const endpoint of provider.endpoints) {
        if (!endpoint.path.includes(MODEL_SEGMENT)) continue;
        const matched = matchTemplate(endpoint.path, mount.upstreamPrefix + rest);
        if (!matched) continue;
        // An endpoint's path with a model segment that is no model id is refused, never forwarded as
        // `other`: that would skip the body's checks, the token's model list and the usage reading.
        if (matched === 'bad model') return { unsafe: { provider } };
        return endpoint.method === method
          ? { found: { provider, endpoint, upstreamPath: mount.upstreamPrefix + rest, model: matched.model } }
          : { wrongMethod: { provider, allowed: endpoint.method } };
      }
      if (mount.othersRefused && !provider.endpoints.some((e) => e.path === mount.upstreamPrefix + rest))
        return { notOffered: { provider } };
      if (!isSafeSubPath(rest)) {
        if (mount.endpointsOnly) continue;
        return { unsafe: { provider } };
      }
      const upstreamPath = mount.upstreamPrefix + rest;
      const endpoint = provider.endpoints.find((e) => e.path === upstreamPath);
      if (endpoint) {
        return endpoint.method === method
          ? { found: { provider, endpoint, upstreamPath } }
          : { wrongMethod: { provider, allowed: endpoint.method } };
      }
      if (mount.endpointsOnly) continue;
      return {
        found: {
          provider,
          endpoint: { kind: 'other', method, path: upstreamPath, dialect: other.get(provider)! },
          upstreamPath,
        },
      };
    }
    return undefined;
  };
}
