import { parseToken, TOKEN_PREFIX } from '../auth/proxy-token';
import { readCacheRequest } from '../cache/cache-request';
import type { IncomingRequest } from '../http/request';
import { asObject, tryParseJson } from '../json';
import type { Provider, Route } from '../providers/registry';
import type { CredentialHeader } from '../providers/types';
import type { ProxyRequest } from './state';

/** Larger bodies of unknown format (uploads) are not parsed for their model. */
const MAX_PARSED_BYTES = 1024 * 1024;

/** Reads a credential header value; `Bearer ` is stripped where the header uses it. */
function readCredential(incoming: IncomingRequest, { header, scheme }: CredentialHeader): string | undefined {
  const value = incoming.headers[header]?.trim();
  if (!value) return undefined;
  if (!scheme) return value;
  return value.toLowerCase().startsWith(`${scheme.toLowerCase()} `) ? value.slice(scheme.length + 1).trim() : undefined;
}

function presentedCredential(incoming: IncomingRequest, provider: Provider): string | undefined {
  const { credential } = provider.dialect;
  return readCredential(incoming, credential) ?? (credential.alsoAccepted && readCredential(incoming, credential.alsoAccepted));
}

/**
 * Everything a proxy request says about itself, read without any I/O: the
 * credential and mode (a `sk-proxy-` credential means stored mode: docs/behaviour.md, "Authentication modes"),
 * the body, the requester label and the cache settings. The body is judged in the validation step.
 */
export function readProxyRequest(incoming: IncomingRequest, route: Route): ProxyRequest {
  const { provider, endpoint } = route;
  const { dialect } = endpoint;
  const credential = presentedCredential(incoming, provider);
  const stored = credential?.startsWith(TOKEN_PREFIX) ?? false;
  const tokenText = stored ? credential : incoming.headers['x-proxy-token']?.trim();
  const token = tokenText ? parseToken(tokenText) : undefined;

  // A body forwarded unread (uploads, GETs) is looked at only if it is JSON: for the row's model.
  const readsBody = dialect.requestBody === 'json' || (/json/i.test(incoming.headers['content-type'] ?? '') && incoming.body.length <= MAX_PARSED_BYTES);
  const parsed = readsBody ? tryParseJson(incoming.body.toString('utf8')) : undefined;
  const body = asObject(parsed);

  return {
    provider,
    endpoint,
    upstreamPath: route.upstreamPath,
    mode: stored ? 'stored' : 'pass-through',
    credential,
    token,
    parsedBody: parsed,
    body,
    requester: incoming.headers['x-proxy-user'] || undefined,
    stream: body?.stream === true,
    // An invalid body never reaches the cache (step 5 refuses it first); its key is simply unused.
    cache: readCacheRequest({ headers: incoming.headers, accountId: token?.accountId, provider: provider.id, dialect, body }),
  };
}
