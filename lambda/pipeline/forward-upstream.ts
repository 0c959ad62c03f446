import type { UpstreamAnswer } from '../cache/cache-fill';
import { ServerStoppedError, UpstreamEncodingError } from '../base/errors';
import type { Deps } from '../wiring/deps';
import { plainErrorText } from '../providers/dialects/error-text';
import { upstreamUrl } from '../providers/registry';
import type { Dialect } from '../providers/types';
import { EventStreamRedactor } from '../streaming/event-stream-redact';
import { SecretRedactor, searchableSecrets } from '../streaming/redact';
import { SseRedactor } from '../streaming/sse-redact';
import { relayBody, type RelayEnd } from '../streaming/relay';
import { MAX_ERROR_READ, UsageTap } from '../streaming/usage-tap';
import { callUpstream, type UpstreamResponse } from '../upstream/call-upstream';
import { signAwsRequest } from '../upstream/aws-signing';
import { bodyDecoding, type BodyDecoding } from '../upstream/content-encoding';
import { clientResponseHeaders, upstreamRequestHeaders } from '../upstream/headers';
import { queryWithoutSecrets } from '../upstream/query';
import { finishResponse } from './finish-response';
import type { InvocationContext } from './pipeline';
import { requestTextChars } from '../usage/estimate';
import { requestSecrets } from './request-secrets';
import type { ProxyState } from './state';
import { Answer } from './step';
import type { Completion } from '../usage/build-row';

/**
 * How long before Lambda's time limit an answer still running is cut: its row is written in that
 * time, while the function still runs (docs/deploy.md, "Timeout").
 */
export const ROW_WRITE_RESERVE_MS = 5_000;

/** Where an answer still running is cut, with the row's reason; none where the runtime sets no time limit (the local server). */
function invocationDeadline(context: InvocationContext | undefined): { inMs: number; reason: string } | undefined {
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining === undefined) return undefined;
  const reason = `the proxy ended the answer ${ROW_WRITE_RESERVE_MS / 1000} s before the function's time limit, to record its usage`;
  return { inMs: Math.max(0, remaining - ROW_WRITE_RESERVE_MS), reason };
}

/** What forwarding uses: the upstream settings, the log and the runtime's AWS credentials. */
export type ForwardDeps = Pick<Deps, 'config' | 'log' | 'awsCredentials'>;

/** The body sent upstream: the client's bytes, unless the proxy must ask for stream usage. */
function upstreamBody(state: ProxyState): { body: Buffer; addedStreamUsage: boolean } {
  if (!state.stream || state.provider.streamUsage !== 'when-asked' || !state.body)
    return { body: state.request.body, addedStreamUsage: false };
  const { body, added } = state.endpoint.dialect.requestStreamUsage(state.body, state.request.body);
  return { body, addedStreamUsage: added };
}

/**
 * Step 10, the handler: call the provider, tap its answer for usage, pipe it back
 * unchanged, and finish once — the row's ending, and the cache fill settled — however the body
 * ends. A call that fails throws; pipeline.ts records it.
 */
export function forwardUpstream(deps: ForwardDeps) {
  return async function forwardUpstream(state: ProxyState, context?: InvocationContext): Promise<Answer> {
    const { cacheFill } = state;
    const { dialect } = state.endpoint;
    const { body, addedStreamUsage } = upstreamBody(state);
    const deadline = invocationDeadline(context);

    // Call: an answer the proxy can read, or a typed error.
    const { upstream, decoding, signingSecrets } = await callProvider(deps, state, body, context, deadline?.inMs).catch(
      (error: unknown) => {
        cacheFill.abandon(error);
        throw error;
      },
    );
    // Every credential of this request, whoever owns it, is cut out of whatever the provider sends back (the AWS signature's too, once signed).
    const secrets = searchableSecrets([...requestSecrets(state), ...signingSecrets]);

    // Tap.
    const answer = describeAnswer(upstream, dialect);
    const ok = answer.status >= 200 && answer.status < 300;
    // Every compressed body is decoded, so the redactor and the usage reader see its real bytes; the client gets them as identity.
    const transcoder = decoding.kind === 'decode' ? decoding.create() : undefined;
    const tap = new UsageTap({
      dialect,
      format: answer.format,
      hideAddedUsage: addedStreamUsage,
      // An error body reaches the client whole; only its start is kept, for the row's message.
      maxJsonRead: ok ? undefined : MAX_ERROR_READ,
      // Usage the body doesn't carry may come with the headers (Bedrock's token counts).
      headerUsage: dialect.usageFromHeaders?.(upstream.headers),
      // The entry is committed before the client sees the end, so a retry right after always hits.
      copy: cacheFill.begin(answer),
    });

    // Finish.
    let ended: (completion: Completion) => void = () => undefined;
    const ending = new Promise<Completion>((resolve) => (ended = resolve));
    const finish = (end: RelayEnd) => {
      // A response the server itself cut (shutdown) says so; a client that left says that.
      const cutByServer = end.kind === 'client-gone' && context?.clientGone?.reason instanceof ServerStoppedError;
      const interruption =
        end.kind === 'complete' ? undefined : cutByServer ? new ServerStoppedError(true).message : end.reason;
      const result = tap.result();
      const error =
        upstream.status >= 400
          ? (dialect.upstreamErrorMessage(result.json) ?? quotedMessage(result.text) ?? plainErrorText(result.text))
          : (interruption ?? result.error);
      if (result.oversizedEvents)
        deps.log.warn('stream events over 16 MB passed on unparsed', {
          request_id: state.request.id,
          events: result.oversizedEvents,
        });
      // A stream cut before its end is billed what the provider generated: its row carries an estimate.
      const cutOff =
        ok && state.stream && !result.complete
          ? { requestChars: requestTextChars(state.body), deliveredChars: result.deliveredChars ?? 0 }
          : undefined;
      ended({ status: upstream.status, model: result.model, usage: result.usage, error, cutOff });
      // Does nothing once a complete answer's commit has started; otherwise nothing is stored and waiting requests go on.
      cacheFill.abandon();
    };

    // Pipe.
    relayBody({
      upstream,
      transcoder,
      // An AWS event stream is redacted frame by frame, so each frame stays whole and its CRCs valid;
      // a stream, event by event, so a credential spread over several deltas is found too.
      redactor:
        answer.format === 'eventstream'
          ? new EventStreamRedactor(secrets, (problem) => Buffer.from(dialect.streamErrorEvent(problem, 'closed')))
          : answer.format === 'sse'
            ? new SseRedactor(secrets)
            : new SecretRedactor(secrets),
      tap,
      stallMs: deps.config.upstreamTimeoutMs,
      deadline,
      closingBytes:
        answer.format === 'sse' || answer.format === 'eventstream'
          ? (reason, cut) => dialect.streamErrorEvent(reason, cut)
          : undefined,
      // A server that is stopping reads nothing more for a client it cut itself.
      mayReadOn: () => !(context?.clientGone?.reason instanceof ServerStoppedError),
      onEnd: finish,
    });

    const headers = {
      ...clientResponseHeaders(upstream.headers, transcoder !== undefined, secrets),
      ...cacheFill.statusHeader,
    };
    return new Answer(finishResponse(state, { statusCode: upstream.status, headers, body: tap }), ending);
  };
}

/**
 * The provider's answer, in a content coding the proxy can decode: a body it cannot decode
 * cannot be checked for credentials, so it is not passed on (a 502).
 */
async function callProvider(
  deps: ForwardDeps,
  state: ProxyState,
  body: Buffer,
  context: InvocationContext | undefined,
  deadlineMs: number | undefined,
): Promise<{
  upstream: UpstreamResponse;
  decoding: Exclude<BodyDecoding, { kind: 'unsupported' }>;
  signingSecrets: string[];
}> {
  const request = await upstreamRequest(deps, state, body);
  const upstream = await callUpstream({
    method: state.request.method,
    url: request.url,
    headers: request.headers,
    body,
    // Headers that would come after the deadline would come too late to record anything.
    // A request that first waited for an identical one has only what is left of its own limit.
    timeoutMs: Math.min(deps.config.upstreamTimeoutMs, state.cacheFill.timeLimitMs ?? Infinity, deadlineMs ?? Infinity),
    // A request that waited for an identical one is told of the limit it was held to from its arrival.
    namedLimitMs: state.cacheFill.timeLimitMs === undefined ? undefined : deps.config.upstreamTimeoutMs,
    clientGone: context?.clientGone,
  });
  const decoding = bodyDecoding(upstream.headers['content-encoding']);
  if (decoding.kind !== 'unsupported') return { upstream, decoding, signingSecrets: request.secrets ?? [] };
  upstream.abort();
  throw new UpstreamEncodingError(decoding.coding);
}

/**
 * The URL and headers sent upstream: the provider key in the dialect's credential header, or, for a
 * provider reached through AWS with no key (docs/bedrock.md), a SigV4 signature made with the runtime's credentials.
 */
async function upstreamRequest(
  deps: ForwardDeps,
  state: ProxyState,
  body: Buffer,
): Promise<{ url: URL; headers: Record<string, string>; secrets?: string[] }> {
  const base = deps.config.upstreams[state.provider.id];
  const proxySecrets = presentedProxyToken(state);
  const url = upstreamUrl(
    state.provider,
    base.baseUrl,
    state.upstreamPath,
    queryWithoutSecrets(state.request.rawQuery, proxySecrets),
  );
  const headers = upstreamRequestHeaders(
    state.request.headers,
    state.endpoint.dialect,
    state.upstreamKey,
    body.length > 0,
    proxySecrets,
  );
  if (state.upstreamKey !== undefined || !base.aws) return { url, headers };
  return {
    url,
    ...(await signAwsRequest({ method: state.request.method, url, headers, body }, base.aws, deps.awsCredentials.get)),
  };
}

/** What the answer is; a body in a format the dialect can't read (an audio file, a download) passes through unread. */
function describeAnswer(upstream: UpstreamResponse, dialect: Dialect): UpstreamAnswer {
  const contentType = String(upstream.headers['content-type'] ?? '');
  const format = contentType.includes('text/event-stream')
    ? 'sse'
    : contentType.includes('application/vnd.amazon.eventstream')
      ? 'eventstream'
      : dialect.requestBody === 'json' || /json/i.test(contentType)
        ? 'json'
        : 'opaque';
  return { status: upstream.status, contentType, format };
}

/** The proxy token as the client presented it, whole and its secret part: no header quoting either goes upstream. */
function presentedProxyToken(state: ProxyState): Array<string | undefined> {
  return [
    state.mode === 'stored' ? state.credential : state.request.headers['x-proxy-token']?.trim(),
    state.token.secret,
  ];
}

/** The provider's message from the start of a JSON error body too large to parse whole. */
function quotedMessage(head: string | undefined): string | undefined {
  const match = head && /"message"\s*:\s*"((?:[^"\\]|\\.){1,2000})/.exec(head);
  return match ? match[1] : undefined;
}
