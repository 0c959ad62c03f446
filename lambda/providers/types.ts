import type { SseEvent } from '../streaming/sse-event';
import type { Usage } from './usage';

export type DialectName = 'messages' | 'chat';

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
}

export interface StreamReader {
  onEvent(event: SseEvent): void;
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
  /** Checks only the fields the spec names; everything else passes through untouched. */
  validate(body: unknown): ValidationResult;
  /** The provider-native error body for an error the proxy answers itself. */
  errorBody(error: NativeError): string;
  /** The provider's own message from an upstream error body, if it has one. */
  upstreamErrorMessage(body: unknown): string | undefined;
  /** Model and usage from a whole JSON response. */
  readResponse(body: unknown): { model?: string; usage?: Usage };
  newStreamReader(): StreamReader;
  /** An error event in the stream's own format, for a stream the proxy has to end early (the provider went silent, or closed the connection). */
  streamErrorEvent(message: string, cause: StreamCut): string;
  /** Rebuilds the JSON response a stream described (serving a stored stream to a non-streaming request). */
  assembleResponse(events: SseEvent[]): unknown;
  /** The events a streaming request would have received for a JSON response (serving a stored JSON answer as a stream). */
  synthesizeEvents(body: unknown): string[];
  /** Whether an event is the usage-only event the proxy itself asked for (see `ProviderModule.streamUsage`). */
  isUsageOnlyEvent(event: SseEvent): boolean;
  /**
   * Adds the request field that makes the provider report usage in streams, by
   * editing the client's bytes (`raw`) in place: every other byte goes upstream as sent.
   */
  requestStreamUsage(body: Record<string, unknown>, raw: Buffer): { body: Buffer; added: boolean };
}

/** A provider is data: where it lives, which dialect it speaks, and its quirks. */
export interface ProviderModule<Id extends string = string> {
  id: Id;
  displayName: string;
  dialect: Dialect;
  /** Default upstream base URL and the environment variable that replaces it. */
  upstream: { baseUrl: string; envVar: string; path: string };
  /** Paths under the proxy base that reach this provider. */
  routes: readonly string[];
  /**
   * `always`: the provider reports usage in every stream.
   * `when-asked`: only with `stream_options.include_usage`; the proxy asks, and hides the extra event from a client that didn't.
   */
  streamUsage: 'always' | 'when-asked';
  /** A short example for the dashboard's snippets: the model a first request uses. */
  exampleModel: string;
}
