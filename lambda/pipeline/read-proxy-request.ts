import { parseToken, TOKEN_PREFIX } from '../auth/proxy-token';
import { cacheKey } from '../cache/cache-key';
import { parseCacheMode } from '../cache/cache-mode';
import { cacheTtlSeconds } from '../cache/cache-ttl';
import type { BackgroundWork } from '../background-work';
import type { IncomingRequest } from '../http/request';
import { asObject, tryParseJson } from '../providers/dialects/json';
import type { Provider } from '../providers/registry';
import type { CredentialHeader, ValidationResult } from '../providers/types';
import type { ProxyState } from './state';

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
 * credential and mode (SPEC 5: a `sk-proxy-` credential means stored mode),
 * the body and its validation, the requester label and the cache settings.
 */
export function readProxyRequest(incoming: IncomingRequest, provider: Provider, work: BackgroundWork): ProxyState {
  const credential = presentedCredential(incoming, provider);
  const stored = credential?.startsWith(TOKEN_PREFIX) ?? false;
  const tokenText = stored ? credential : incoming.headers['x-proxy-token']?.trim();
  const token = tokenText ? parseToken(tokenText) : undefined;

  const parsed = tryParseJson(incoming.body.toString('utf8'));
  const body = asObject(parsed);
  const validation: ValidationResult =
    parsed === undefined ? { ok: false, param: '', message: 'The request body is not valid JSON.' } : provider.dialect.validate(parsed);

  const cacheMode = parseCacheMode(incoming.headers['x-proxy-cache']);
  const invalidValue = typeof cacheMode === 'object' ? cacheMode.invalid : undefined;
  const mode = typeof cacheMode === 'object' ? 'off' : cacheMode;
  const key =
    mode !== 'off' && validation.ok && token && body
      ? cacheKey({ accountId: token.accountId, provider: provider.id, kind: provider.dialect.name, body })
      : undefined;

  return {
    request: incoming,
    work,
    provider,
    mode: stored ? 'stored' : 'pass-through',
    credential,
    token,
    body,
    validation,
    requester: incoming.headers['x-proxy-user'] || undefined,
    stream: body?.stream === true,
    cache: { mode, invalidValue, key, ttlSeconds: cacheTtlSeconds(incoming.headers['cache-control']) },
  };
}
