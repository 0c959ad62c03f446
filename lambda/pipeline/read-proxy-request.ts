import { parseToken, TOKEN_PREFIX } from '../auth/proxy-token';
import { readCacheRequest } from '../cache/cache-request';
import type { BackgroundWork } from '../background-work';
import type { IncomingRequest } from '../http/request';
import { asObject, tryParseJson } from '../json';
import type { Provider, Route } from '../providers/registry';
import type { CredentialHeader, ValidationResult } from '../providers/types';
import type { ProxyState } from './state';

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
 * the body and its validation, the requester label and the cache settings.
 */
export function readProxyRequest(incoming: IncomingRequest, route: Route, work: BackgroundWork): ProxyState {
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
  const validation: ValidationResult =
    dialect.requestBody === 'any' ? { ok: true } : parsed === undefined ? { ok: false, param: '', message: 'The request body is not valid JSON.' } : dialect.validate(parsed);

  return {
    request: incoming,
    work,
    provider,
    endpoint,
    upstreamPath: route.upstreamPath,
    mode: stored ? 'stored' : 'pass-through',
    credential,
    token,
    body,
    validation,
    requester: incoming.headers['x-proxy-user'] || undefined,
    stream: body?.stream === true,
    cache: readCacheRequest({ headers: incoming.headers, accountId: token?.accountId, provider: provider.id, dialect, body: validation.ok ? body : undefined }),
  };
}
