import { parseToken, TOKEN_PREFIX } from '../auth/proxy-token';
import { credentialIn } from '../auth/verify';
import { readCacheRequest } from '../cache/cache-request';
import type { IncomingRequest } from '../http/request';
import { asObject, tryParseJson } from '../base/json';
import type { Provider, Route } from '../providers/registry';
import type { CredentialHeader, Dialect, ValidationResult } from '../providers/types';
import { parseTagHeader, TAG_HEADER } from '../tags/tags';
import { upstreamRequestHeaders } from '../upstream/headers';
import { queryWithoutSecrets } from '../upstream/query';
import type { ProxyRequest } from './state';

/** Larger bodies of unknown format (uploads) are not parsed for their model. */
const MAX_PARSED_BYTES = 1024 * 1024;

const readCredential = (incoming: IncomingRequest, { header, scheme }: CredentialHeader) =>
  credentialIn(incoming.headers[header], scheme);

function presentedCredential(incoming: IncomingRequest, provider: Provider): string | undefined {
  const { credential } = provider.dialect;
  return (
    readCredential(incoming, credential) ??
    (credential.alsoAccepted && readCredential(incoming, credential.alsoAccepted))
  );
}

/**
 * Everything a proxy request says about itself, read without any I/O: the
 * credential and mode (a `sk-proxy-` credential means stored mode: docs/api.md, "Credentials"),
 * the body and what the endpoint makes of it (refused, if it must be, in step 5), the requester label,
 * the tags and the cache settings.
 */
export function readProxyRequest(incoming: IncomingRequest, route: Route): ProxyRequest {
  const { provider, endpoint } = route;
  const { dialect } = endpoint;
  const credential = presentedCredential(incoming, provider);
  const stored = credential?.startsWith(TOKEN_PREFIX) ?? false;
  const tokenText = stored ? credential : incoming.headers['x-proxy-token']?.trim();
  const token = tokenText ? parseToken(tokenText) : undefined;

  // A body forwarded unread (uploads, GETs) is looked at only if it is JSON: for the row's model.
  const readsBody =
    dialect.requestBody === 'json' ||
    (/json/i.test(incoming.headers['content-type'] ?? '') && incoming.body.length <= MAX_PARSED_BYTES);
  const parsed = readsBody ? tryParseJson(incoming.body.toString('utf8')) : undefined;
  const body = asObject(parsed);
  const bodyCheck = judgeBody(dialect, parsed);

  return {
    provider,
    endpoint,
    upstreamPath: route.upstreamPath,
    pathModel: route.model,
    mode: stored ? 'stored' : 'pass-through',
    credential,
    token,
    body,
    requester: incoming.headers['x-proxy-user'] || undefined,
    requestTags: parseTagHeader(incoming.headers[TAG_HEADER]),
    bodyCheck,
    stream: endpoint.streams === true || body?.stream === true,
    // Only a body the endpoint accepts gets a key (hashing an absurd one could fail); step 5 raises the refusal.
    cache: readCacheRequest({
      headers: incoming.headers,
      accountId: token?.accountId,
      provider: provider.id,
      dialect,
      body: bodyCheck.ok ? body : undefined,
      bodyText: parsed === undefined ? undefined : incoming.body.toString('utf8'),
      // What the provider will be sent, less the credential the proxy sets: a header that reaches it can change its answer.
      forwardedHeaders: upstreamRequestHeaders(incoming.headers, dialect, undefined, incoming.body.length > 0, [
        tokenText,
        token?.secret,
      ]),
      // What the provider will be sent after the path: a query parameter can change its answer as a header can.
      forwardedQuery: queryWithoutSecrets(incoming.rawQuery, [tokenText, token?.secret]),
      model: route.model,
      passThroughKey: stored ? undefined : credential,
    }),
  };
}

/** What the endpoint makes of the body: judged once, here; step 5 refuses a failure, and only a body that passes gets a cache key. */
function judgeBody(dialect: Dialect, parsed: unknown): ValidationResult {
  if (dialect.requestBody === 'any') return { ok: true };
  if (parsed === undefined) return { ok: false, message: 'The request body is not valid JSON.', param: '' };
  return dialect.validate(parsed);
}
