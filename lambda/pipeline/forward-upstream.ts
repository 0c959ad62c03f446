import { Duplex, type Transform } from 'node:stream';
import type { UpstreamAnswer } from '../cache/cache-fill';
import { ServerStoppedError } from '../base/errors';
import type { Deps } from '../wiring/deps';
import { plainErrorText } from '../providers/dialects/error-text';
import type { Dialect, StreamCut } from '../providers/types';
import type { Continuer } from '../streaming/continuation';
import { continuerFor } from '../streaming/continuers';
import { EventStreamRedactor } from '../streaming/event-stream-redact';
import { SecretRedactor, searchableSecrets } from '../streaming/redact';
import { SseRedactor } from '../streaming/sse-redact';
import { relayBody, type RelayEnd } from '../streaming/relay';
import { MAX_ERROR_READ, UsageTap, type AnswerCopy } from '../streaming/usage-tap';
import { noteFailedAttempts, type AttemptRecord } from '../upstream/attempts';
import type { UpstreamResponse } from '../upstream/call-upstream';
import { clientResponseHeaders } from '../upstream/headers';
import { requestTextChars } from '../usage/estimate';
import type { Completion } from '../usage/build-row';
import { callTargets, type CallDeps, type Sending, type TargetAnswer } from './call-targets';
import { finishResponse } from './finish-response';
import type { InvocationContext } from './pipeline';
import { requestSecrets } from './request-secrets';
import type { ProxyState } from './state';
import { Answer } from './step';

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

/** What forwarding uses: the upstream settings, the log, the runtime's AWS credentials, a fallback provider's stored key. */
export type ForwardDeps = CallDeps & Pick<Deps, 'log'>;

/**
 * Step 10, the handler: call the provider (its fallbacks in turn, call-targets.ts), tap its answer
 * for usage, pipe it back unchanged, and finish once — the row's ending, and the cache fill
 * settled — however the body ends. A stream cut mid-answer with a fallback left is continued
 * there (continueStream). A call that fails throws; pipeline.ts records it.
 */
export function forwardUpstream(deps: ForwardDeps) {
  return async function forwardUpstream(state: ProxyState, context?: InvocationContext): Promise<Answer> {
    const { cacheFill } = state;
    const { dialect } = state.endpoint;
    const { targets } = state.failover;
    const deadline = invocationDeadline(context);
    const deadlineAt = deadline && performance.now() + deadline.inMs;
    const attempts: AttemptRecord[] = [];
    const call = (from: number, sending: Sending) =>
      callTargets({ deps, state, context, from, sending, deadlineAt, attempts });

    // Call: an answer the proxy can read, or a typed error.
    const first = await call(0, { kind: 'request' }).catch((error: unknown) => {
      cacheFill.abandon(error);
      // Every target failed without an answer: the row lists what was tried.
      noteFailedAttempts(error, attempts);
      throw error;
    });
    const { upstream } = first;
    // A fallback's answer is another model's: never stored under the key of the model asked for.
    if (first.index !== 0) cacheFill.abandon();
    // Every credential of this request, whoever owns it, is cut out of whatever the provider sends back (the AWS signature's
    // and a fallback provider's key too).
    const secretsOf = (answer: TargetAnswer) => searchableSecrets([...requestSecrets(state), ...answer.secrets]);

    // Tap.
    const answer = describeAnswer(upstream, dialect);
    const ok = answer.status >= 200 && answer.status < 300;
    // What the client has of the stream, for a fallback to continue from if the stream breaks.
    const continuer =
      ok && state.stream && targets.length > 1 ? continuerFor(dialect.name, answer.format, state.body) : undefined;
    const tap = new UsageTap({
      dialect,
      format: answer.format,
      hideAddedUsage: first.addedStreamUsage,
      // An error body reaches the client whole; only its start is kept, for the row's message.
      maxJsonRead: ok ? undefined : MAX_ERROR_READ,
      // Usage the body doesn't carry may come with the headers (Bedrock's token counts).
      headerUsage: dialect.usageFromHeaders?.(upstream.headers),
      // The entry is committed before the client sees the end, so a retry right after always hits.
      copy: alsoTo(cacheFill.begin(answer), continuer),
    });

    // Finish.
    let answering = first.index;
    /** Characters the streams before the answering one delivered (a continued stream). */
    let deliveredBefore = 0;
    const continuedFrom: NonNullable<Completion['continuedFrom']> = [];
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
          ? {
              requestChars: requestTextChars(state.body),
              deliveredChars: (result.deliveredChars ?? 0) - deliveredBefore,
            }
          : undefined;
      const target = targets[answering];
      ended({
        status: upstream.status,
        // The tap read the first stream's model; a continued stream was answered by its last target,
        // and an answer that names no model (Bedrock's) by the target it came from.
        model: continuedFrom.length ? target.model : (result.model ?? (answering !== 0 ? target.model : undefined)),
        usage: result.usage,
        error,
        cutOff,
        provider: target.provider.id === state.provider.id ? undefined : target.provider.id,
        attempts: attempts.length > 1 || answering !== 0 ? attempts : undefined,
        continuedFrom: continuedFrom.length ? continuedFrom : undefined,
      });
      // Does nothing once a complete answer's commit has started; otherwise nothing is stored and waiting requests go on.
      cacheFill.abandon();
    };

    // Pipe.
    const closingBytes =
      answer.format === 'sse' || answer.format === 'eventstream'
        ? (reason: string, cut: StreamCut) => dialect.streamErrorEvent(reason, cut)
        : undefined;
    const relay = (from: TargetAnswer, splice?: Transform) => {
      const secrets = secretsOf(from);
      const decoder = from.decoding.kind === 'decode' ? from.decoding.create() : undefined;
      const more = from.index < targets.length - 1;
      relayBody({
        upstream: from.upstream,
        // A compressed continuation is decoded before it is spliced.
        transcoder:
          decoder && splice ? Duplex.from({ writable: decoder, readable: decoder.pipe(splice) }) : (decoder ?? splice),
        // An AWS event stream is redacted frame by frame, so each frame stays whole and its CRCs valid;
        // a stream, event by event, so a credential spread over several deltas is found too.
        redactor:
          answer.format === 'eventstream'
            ? new EventStreamRedactor(secrets, (problem) => Buffer.from(dialect.streamErrorEvent(problem, 'closed')))
            : answer.format === 'sse'
              ? new SseRedactor(secrets)
              : new SecretRedactor(secrets),
        tap,
        // With a fallback left, a silent stream is given up sooner: the fallback continues it.
        stallMs: continuer && more ? state.failover.stallMs : deps.config.upstreamTimeoutMs,
        deadline: deadline && { inMs: Math.max(0, deadlineAt! - performance.now()), reason: deadline.reason },
        closingBytes,
        // A server that is stopping reads nothing more for a client it cut itself.
        mayReadOn: () => !(context?.clientGone?.reason instanceof ServerStoppedError),
        handOver: continuer && more ? () => true : undefined,
        onEnd: (end) => (end.kind === 'handed-over' ? void continueStream(end) : finish(end)),
      });
      return decoder !== undefined;
    };

    /**
     * A stream broke off after bytes went out: the next target carries on from what was sent
     * (the assistant's prefill), spliced into the same stream. A chat target that refuses a prefill
     * answers from the start instead, and its answer is used only if it begins with what was sent.
     * Anything else ends the stream with an error in its own format that names the first failure.
     */
    async function continueStream(end: { reason: string; cause: StreamCut }): Promise<void> {
      cacheFill.abandon();
      const cutAt = tap.result().deliveredChars ?? 0;
      const fail = (why: string) => {
        if (!tap.writableEnded) tap.end(dialect.streamErrorEvent(why, end.cause));
        finish({ kind: 'cut', reason: why });
      };
      const couldNot = `${end.reason}; the fallback could not continue the answer`;
      const unsound = continuer?.unsound();
      if (!continuer || unsound) return fail(unsound ? `${end.reason}; ${unsound}` : end.reason);
      try {
        // What the client has now is what the continuation must follow.
        let splice = continuer.splice(couldNot);
        let next = await call(answering + 1, { kind: 'prefill', edit: (body) => continuer.prefill(body) });
        if (next.upstream.status >= 400 && next.upstream.status < 500) {
          next.upstream.abort();
          if (!continuer.restart) return fail(couldNot);
          splice = continuer.restart(couldNot);
          next = await call(next.index, { kind: 'restart' });
        }
        if (next.upstream.status < 200 || next.upstream.status >= 300) {
          next.upstream.abort();
          return fail(couldNot);
        }
        if (tap.destroyed) {
          next.upstream.abort();
          return finish({ kind: 'client-gone', reason: 'client disconnected' });
        }
        const cut = targets[answering];
        continuedFrom.push({
          provider: cut.provider.id,
          model: cut.model,
          cutOff: { requestChars: requestTextChars(state.body), deliveredChars: cutAt - deliveredBefore },
        });
        deliveredBefore = cutAt;
        answering = next.index;
        relay(next, splice);
      } catch {
        fail(couldNot);
      }
    }

    const transcoded = relay(first);
    const headers = {
      ...clientResponseHeaders(upstream.headers, transcoded, secretsOf(first)),
      ...cacheFill.statusHeader,
    };
    return new Answer(finishResponse(state, { statusCode: upstream.status, headers, body: tap }), ending);
  };
}

/** The tap's copy of the answer, also read for what the client has so far. */
function alsoTo(copy: AnswerCopy | undefined, continuer: Continuer | undefined): AnswerCopy | undefined {
  if (!continuer) return copy;
  return {
    append(text) {
      continuer.append(text);
      copy?.append(text);
    },
    finish: (result) => copy?.finish(result) ?? Promise.resolve(),
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

/** The provider's message from the start of a JSON error body too large to parse whole. */
function quotedMessage(head: string | undefined): string | undefined {
  const match = head && /"message"\s*:\s*"((?:[^"\\]|\\.){1,2000})/.exec(head);
  return match ? match[1] : undefined;
}
