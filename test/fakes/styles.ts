/**
 * The five upstream styles the fake can speak: where each lives, which fixtures it serves,
 * whether it reports usage in streams unasked, and how it words an error.
 */
import type { ProviderFolder } from '../fixtures/index';

export type FakeStyle = 'anthropic' | 'openai' | 'gemini' | 'mistral' | 'groq';
export type StreamUsagePolicy = 'always' | 'when-asked';

export interface StyleSpec {
  provider: ProviderFolder;
  /** Path of the base URL the proxy is configured with ('' = host root). */
  basePath: string;
  /** What the proxy appends to the base URL. */
  endpoint: '/v1/messages' | '/chat/completions';
  streamUsage: StreamUsagePolicy;
  /** The header the provider identifies its response with (passed through by the proxy), if any. */
  requestIdHeader?: string;
  credential: 'x-api-key' | 'bearer';
  errorBody(status: number, message: string): unknown;
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const GOOGLE_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const OPENAI_ERROR_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

const openAiError = (status: number, message: string) => {
  const [type, code] = OPENAI_ERROR_TYPES[status] ?? ['server_error', null];
  return { error: { message, type, param: null, code } };
};

export const STYLES: Record<FakeStyle, StyleSpec> = {
  anthropic: {
    provider: 'prov-a',
    basePath: '',
    endpoint: '/v1/messages',
    streamUsage: 'always',
    requestIdHeader: 'request-id',
    credential: 'x-api-key',
    errorBody: (status, message) => ({
      type: 'error',
      error: {
        type: ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
        message,
      },
    }),
  },
  openai: {
    provider: 'prov-b',
    basePath: '/v1',
    endpoint: '/chat/completions',
    streamUsage: 'when-asked',
    requestIdHeader: 'x-request-id',
    credential: 'bearer',
    errorBody: openAiError,
  },
  gemini: {
    provider: 'prov-c',
    basePath: '/v1beta/openai',
    endpoint: '/chat/completions',
    streamUsage: 'when-asked',
    credential: 'bearer',
    // Google's OpenAI-compatible endpoint wraps its error in an array.
    errorBody: (status, message) => [
      { error: { code: status, message, status: GOOGLE_STATUSES[status] ?? 'UNKNOWN' } },
    ],
  },
  mistral: {
    provider: 'prov-d',
    basePath: '/v1',
    endpoint: '/chat/completions',
    streamUsage: 'always',
    requestIdHeader: 'x-kong-request-id',
    credential: 'bearer',
    errorBody: (status, message) => ({
      object: 'error',
      message,
      type: status === 429 ? 'rate_limited' : status >= 500 ? 'internal_error' : 'invalid_request_error',
      param: null,
      code: null,
    }),
  },
  groq: {
    provider: 'prov-e',
    basePath: '/openai/v1',
    endpoint: '/chat/completions',
    streamUsage: 'always',
    requestIdHeader: 'x-request-id',
    credential: 'bearer',
    errorBody: (status, message) => {
      const body = openAiError(status, message);
      const { param: _param, ...error } = body.error;
      return { error };
    },
  },
};

export const DEFAULT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Invalid API key',
  403: 'Permission denied',
  404: 'Not found',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  529: 'Overloaded',
};

/**
 * The error event a style's stream reports mid-answer: Anthropic's `event: error` (as in
 * `prov-a/stream-error.sse`), an `{"error":…}` chunk for the chat completions styles (`prov-b/stream-error.sse`).
 */
export function streamErrorEvent(style: FakeStyle, message: string): string {
  if (style === 'anthropic')
    return `event: error\ndata: ${JSON.stringify(STYLES.anthropic.errorBody(529, message))}\n\n`;
  return `data: ${JSON.stringify(openAiError(500, message))}\n\n`;
}

export function defaultFixture(style: FakeStyle, stream: boolean): string {
  return `${STYLES[style].provider}/text.${stream ? 'sse' : 'json'}`;
}
