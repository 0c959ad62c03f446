import type { NativeError } from '../types';

/** Error types and codes of OpenAI-style APIs (chat completions, Responses, embeddings), by the status the proxy answers with. */
const ERRORS: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'authentication_error', code: 'invalid_api_key' },
  402: { type: 'insufficient_quota', code: 'insufficient_quota' },
  403: { type: 'permission_error', code: 'insufficient_permissions' },
  404: { type: 'invalid_request_error', code: 'unknown_url' },
  405: { type: 'invalid_request_error', code: 'method_not_allowed' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  415: { type: 'invalid_request_error', code: 'unsupported_media_type' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  502: { type: 'server_error', code: 'upstream_unreachable' },
  503: { type: 'server_error', code: 'service_unavailable' },
  504: { type: 'server_error', code: 'upstream_timeout' },
};

/** `{"error":{"message","type","param","code"}}`: what the official SDKs turn into their typed errors. */
export function openAiErrorBody({ status, message, param, code }: NativeError): string {
  const known = ERRORS[status] ?? { type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
  return JSON.stringify({ error: { message, type: known.type, param: param ?? null, code: code ?? known.code } });
}
