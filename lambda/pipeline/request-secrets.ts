import { parseToken } from '../auth/proxy-token';
import { searchableSecrets } from '../streaming/redact';

/** Request headers that carry a credential in some provider's SDK, and the proxy token's own header. */
export const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'x-proxy-token',
];

/** What a request may have proved about its credentials by the step where it is answered or recorded. */
export interface SecretSources {
  request: { headers: Record<string, string | undefined> };
  credential?: string;
  token?: { secret: string };
  upstreamKey?: string;
  /** Every key of the provider's pool, once opened: any of them may be sent. */
  keyPool?: readonly { key: string }[];
}

/**
 * Every credential of a request, whoever owns it (SECURITY.md, "What is scrubbed where"): each
 * credential header as sent and without its scheme, the proxy token whole and its secret part, and
 * every stored key of the provider's pool once resolved. Read from the request itself too, so an answer given before
 * the credential was identified (a malformed token, two keys) is scrubbed as well.
 */
export function requestSecrets(state: SecretSources): string[] {
  const found: Array<string | undefined> = [state.credential, state.token?.secret, state.upstreamKey];
  for (const { key } of state.keyPool ?? []) found.push(key);
  for (const { value, bare } of credentialHeaderValues(state.request.headers))
    found.push(value, bare, parseToken(bare)?.secret);
  return searchableSecrets(found);
}

/** Each credential header's value as sent and without its scheme (`Bearer`, `Basic`): the rest is the credential. */
export function credentialHeaderValues(
  headers: Record<string, string | undefined>,
): Array<{ name: string; value: string; bare: string }> {
  const found: Array<{ name: string; value: string; bare: string }> = [];
  for (const name of CREDENTIAL_HEADERS) {
    const value = headers[name]?.trim();
    if (value) found.push({ name, value, bare: value.replace(/^[A-Za-z0-9-]+ +/, '') });
  }
  return found;
}
