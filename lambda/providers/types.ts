import type { SseEvent } from '../sse/sse-event';
import type { CatalogEntry } from './catalog';
import type { Usage } from './usage';

export type DialectName = 'messages' | 'chat' | 'responses' | 'embeddings' | 'converse' | 'invoke' | 'passthrough';

/**
 * The response cache's namespaces, one per wire format: the same body sent to two
 * endpoint kinds is two different questions (a JSON endpoint and its streaming twin share one). Declared here, with the dialects that
 * choose one, so the cache reads the providers and never the other way round.
 */
export type CacheKind = 'messages' | 'chat' | 'responses' | 'embeddings' | 'converse' | 'invoke';

/** Why the proxy ended a stream early. */
export type StreamCut = 'stalled' | 'closed';

/** The error the proxy itself answers with, rendered in the endpoint's own error body. */
export interface NativeError {
  status: number;
  message: string;
  /** The body field at fault, for validation errors. */
  param?: string;
  code?: string;
}

/** What a stream's events said once it ended. */
export interface StreamOutcome {
  model?: string;
  usage?: Usage;
  /** The provider reported an error inside the stream. */
  error?: string;
  /** The dialect's terminal event was seen (the stream was not cut off). */
  complete: boolean;
  /**
   * The answer itself has ended (chat's `finish_reason`, Anthropic's `message_delta`, Converse's
   * `messageStop`): what may still follow is its usage and the terminal event.
   */
  answerEnded?: boolean;
  /** Characters of output text the stream delivered, for an estimate when it was cut off before its usage. */
  deliveredChars?: number;
}

/**
 * One event of a stream, whatever its framing: an SSE event, or a message of an AWS event stream
 * (`event` its `:event-type`, `data` its payload as text, `exception` its `:exception-type` when the
 * stream reports an error).
 */
export type StreamEvent = Pick<SseEvent, 'event' | 'data'> & { exception?: string };

export interface StreamReader {
  onEvent(event: StreamEvent): void;
  outcome(): StreamOutcome;
}

export interface CredentialHeader {
  header: string;
  scheme?: 'Bearer';
}

export type ValidationResult = { ok: true } | { ok: false; message: string; param: string };

/**
 * Everything that differs between the two API styles. Written once per style;
 * providers only choose one.
 */
export interface Dialect {
  name: DialectName;
  /** How the client presents its credential, and how the proxy presents the provider key upstream. */
  credential: CredentialHeader & {
    /** Also read from the client (newer SDKs of the style send it), never used upstream. */
    alsoAccepted?: CredentialHeader;
  };
  /** Other content types the API's own SDK sends a JSON body under (the AWS SDK labels an InvokeModel body `application/octet-stream`). */
  jsonLabels?: RegExp;
  /** Client headers of the API's own (`x-amzn-bedrock-…`: guardrails, trace) forwarded though others of their family are withheld. */
  forwardedHeaderPrefix?: string;
  /** Checks only the fields the proxy requires (docs/errors-and-limits.md); everything else passes through untouched. */
  validate(body: unknown): ValidationResult;
  /** The provider-native error body for an error the proxy answers itself. */
  errorBody(error: NativeError): string;
  /** Headers that go with that body, where the API names its error type in a header (AWS: `x-amzn-ErrorType`). */
  errorHeaders?(error: NativeError): Record<string, string>;
  /** The provider's own message from an upstream error body, if it has one. */
  upstreamErrorMessage(body: unknown): string | undefined;
  /** Model and usage from a whole JSON response. */
  readResponse(body: unknown): { model?: string; usage?: Usage };
  /** Usage from the response headers, for an answer whose body carries none (Bedrock's token-count headers). */
  usageFromHeaders?(headers: Record<string, string | string[] | undefined>): Usage | undefined;
  newStreamReader(): StreamReader;
  /** An error event in the stream's own format, for a stream the proxy has to end early (the provider went silent, or closed the connection). */
  streamErrorEvent(message: string, cause: StreamCut): string | Buffer;
  /**
   * An event as the provider sends it when not asked for stream usage, for a client that didn't ask
   * while the proxy did (see `ProviderModule.streamUsage`): its raw text, without what asking added
   * (`''`: the whole event was added).
   */
  withoutAddedUsage(event: SseEvent): string;
  /**
   * Adds the request field that makes the provider report usage in streams, by
   * editing the client's bytes (`raw`) in place: every other byte goes upstream as sent.
   */
  requestStreamUsage(body: Record<string, unknown>, raw: Buffer): { body: Buffer; added: boolean };
  /**
   * What the request body is: `json` is parsed and validated (anything else is a 415);
   * `any` is forwarded as sent, unread (uploads, GETs), and read only if it happens to be JSON.
   */
  requestBody: 'json' | 'any';
  /**
   * The response cache's namespace for this wire format (absent: never cached), and whether one
   * request may use it: not when its answer depends on state kept by the provider.
   */
  cache?: { kind: CacheKind; allowed(body: Record<string, unknown>): boolean };
  /** `tokens`: priced from the usage the answer reports. `free`: the provider charges nothing (cost 0, priced). */
  billing: 'tokens' | 'free';
}

/**
 * What a row says the request was. Each endpoint a provider offers has one; `other` is any
 * further path under a provider, forwarded as is.
 */
export type EndpointKind =
  'chat' | 'messages' | 'responses' | 'embeddings' | 'count_tokens' | 'models' | 'converse' | 'invoke' | 'other';

export const ENDPOINT_KINDS: readonly EndpointKind[] = [
  'chat',
  'messages',
  'responses',
  'embeddings',
  'count_tokens',
  'models',
  'converse',
  'invoke',
  'other',
];

/** One endpoint a provider offers: its method, its path below the provider's base URL, and its wire format. */
export interface Endpoint {
  kind: EndpointKind;
  method: string;
  /**
   * Below the provider's upstream base URL, e.g. `/chat/completions`. A `{model}` segment stands for
   * the model id, named in the path rather than the body (`/model/{model}/converse`).
   */
  path: string;
  dialect: Dialect;
  /** The endpoint always answers with a stream (the body has no `stream` field to say so). */
  streams?: boolean;
}

/**
 * A path prefix below the proxy base that reaches a provider, and the upstream path prefix
 * (below the base URL) it stands for. `endpointsOnly` mounts reach the listed endpoints and
 * nothing else (an alias such as `/messages` for `/v1/messages`).
 */
export interface Mount {
  prefix: string;
  upstreamPrefix: string;
  endpointsOnly?: boolean;
  /** Any other path below this mount is refused (404) rather than forwarded as `other`. */
  othersRefused?: boolean;
}

/**
 * A provider at run time: its catalog entry (`catalog.ts`, the one place a provider is declared)
 * with the dialect code and the routes its dialect builds from it.
 */
export interface ProviderModule<Id extends string = string> extends Pick<
  CatalogEntry,
  'displayName' | 'upstream' | 'streamUsage' | 'exampleModel' | 'prices'
> {
  id: Id;
  /** The provider's main API style: how clients present credentials, and the error shape of paths it has no endpoint for. */
  dialect: Dialect;
  /** The endpoints with a known wire format; the first is the provider's main one. */
  endpoints: readonly Endpoint[];
  /** Where the provider is reached below the proxy base; any path below a mount that isn't an endpoint is forwarded as `other`. */
  mounts: readonly Mount[];
}
