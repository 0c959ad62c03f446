import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import type { StreamCut } from '../providers/types';

/**
 * After the answer's terminal event, how long the provider's connection may stay open before the
 * proxy closes it: a body that ends right after is read to its end, so the connection is reused.
 */
const LINGER_AFTER_ANSWER_MS = 1_000;

/**
 * How long the provider's stream is still read once a client left after the answer ended but before
 * its usage and terminal event (a client that stops at `finish_reason`): long enough for the usage
 * chunk that follows the answer at once, short enough to hold no one up.
 */
export const READ_ON_AFTER_ANSWER_MS = 5_000;

/** How a relayed body ended; reported exactly once. */
export type RelayEnd =
  /** Every upstream byte reached the tap, or the answer's terminal event did; and the tap ended or closed after it. */
  | { kind: 'complete' }
  /** The upstream body broke off, went quiet, or could not be decoded. */
  | { kind: 'cut'; reason: string }
  /** The client went away first; the upstream call has been stopped. */
  | { kind: 'client-gone'; reason: string }
  /** The client went away after the answer ended, and the provider's usage and terminal event did not follow in time. */
  | { kind: 'left-after-answer'; reason: string };

export interface RelayOptions {
  /** The provider's response body, and how to stop the call. */
  upstream: { body: IncomingMessage; abort(): void };
  /** Decodes a compressed body the client gets decoded; otherwise the body's bytes go to the tap as they come. */
  transcoder?: Transform;
  /** Cuts the request's credentials out of the bytes (holding back only a possible secret's start). */
  redactor: { write(chunk: Buffer): Buffer; end(): Buffer };
  /**
   * Where the bytes go: the client reads from it. A tap that knows the answer's terminal event says
   * `answered` once it has passed it on (and emits `'answered'`): the answer is then complete.
   */
  tap: Transform & {
    readonly answered?: boolean;
    /** The answer has ended, though its usage and terminal event may not have come yet. */
    readonly answerEnded?: boolean;
    /** Reads what the provider still sends after the client left; true once the terminal event was read. */
    readAfterClientLeft?(chunk: Buffer): boolean;
    /** Settles what reading on found (the cache's copy), before the relay reports the answer complete. */
    finishAfterClientLeft?(): Promise<void>;
  };
  /** A body silent for longer than this is cut. */
  stallMs: number;
  /**
   * The body is cut this many ms from now, whatever it is doing, with the reason given: the runtime
   * is about to stop (Lambda's time limit), and the row must be written before it does.
   */
  deadline?: { inMs: number; reason: string };
  /** The last bytes of a cut body (a stream's error event in its own format), or undefined: the tap is destroyed instead. */
  closingBytes?: (reason: string, cut: StreamCut) => string | Buffer;
  /** Whether a client that left after the answer ended may still have the provider read (not when the server itself stops). */
  mayReadOn?: () => boolean;
  /** The one completion handler. */
  onEnd: (end: RelayEnd) => void;
}

/**
 * Streams the upstream body through the redactor into the tap, with backpressure,
 * as a small state machine:
 *
 *   flowing ─source ends────────▶ ending ─tap ends────────────▶ done (complete)
 *   flowing ─terminal event passed▶ ending ─tap ends or closes ▶ done (complete)
 *   flowing ─body breaks off / stalls / can't be decoded ─────▶ done (cut)
 *   flowing, ending ─the deadline passes ────────────────────▶ done (cut)
 *   flowing, ending ─tap closes before its end (client left) ─▶ done (client-gone)
 *   flowing ─tap closes after the answer ended, before its terminal event ▶ reading-on
 *   reading-on ─terminal event read (and the cache's copy settled) ─────▶ done (complete)
 *   reading-on ─none within READ_ON_AFTER_ANSWER_MS, body breaks off ───▶ done (left-after-answer)
 *
 * Whatever happens later (the upstream socket closing, the tap's own close) finds
 * the relay done and changes nothing, so `onEnd` runs once.
 */
export function relayBody(options: RelayOptions): void {
  const { upstream, transcoder, redactor, tap, stallMs, deadline, closingBytes, mayReadOn, onEnd } = options;
  let state: 'flowing' | 'ending' | 'reading-on' | 'done' = 'flowing';
  let stalled = false;
  let timeUp = false;
  const source: Readable = transcoder ? upstream.body.pipe(transcoder) : upstream.body;

  // A flowing body is stopped upstream and ends with its error event (below, on close); a finished
  // one still draining to a slow client is cut there.
  const deadlineTimer = deadline
    ? setTimeout(() => {
        if (state === 'flowing' || state === 'reading-on') {
          timeUp = true;
          upstream.abort();
        } else if (state === 'ending') {
          settle({ kind: 'cut', reason: deadline.reason });
          tap.destroy(new Error(deadline.reason));
        }
      }, deadline.inMs)
    : undefined;

  let readOnTimer: NodeJS.Timeout | undefined;
  const settle = (end: RelayEnd) => {
    if (state === 'done') return;
    state = 'done';
    clearTimeout(deadlineTimer);
    clearTimeout(readOnTimer);
    onEnd(end);
  };
  const leftAfterAnswer = (why: string) =>
    settle({ kind: 'left-after-answer', reason: `the client left after the answer ended; ${why}` });
  const flushRedactor = () => {
    const rest = redactor.end();
    if (rest.length && !tap.writableEnded) tap.write(rest);
  };
  /** A stream ends with an error event in its own format, so the client's SDK raises instead of hanging. */
  const cut = (reason: string, cause: StreamCut) => {
    if (state !== 'flowing') return;
    if (closingBytes && !tap.writableEnded) tap.end(closingBytes(reason, cause));
    else tap.destroy(new Error(reason));
    settle({ kind: 'cut', reason });
  };

  // refresh() re-arms the same timer: no allocation per chunk.
  const stallTimer = setTimeout(() => {
    stalled = true;
    upstream.abort();
  }, stallMs);
  upstream.body.on('data', () => stallTimer.refresh());
  // Errors of the upstream body show up as an incomplete 'close' below.
  upstream.body.on('error', () => undefined);
  // A cut destroys the tap with a reason; the runtime's pipe reports it to the client, and this
  // listener keeps a cut that comes before that pipe is attached from ending the process.
  tap.on('error', () => undefined);

  // The client left after the answer ended: what the provider still sends is read, not passed on.
  let terminalRead = false;
  const readOn = (chunk: Buffer) => {
    if (terminalRead || !tap.readAfterClientLeft?.(chunk)) return;
    terminalRead = true;
    clearTimeout(readOnTimer);
    const linger = setTimeout(() => upstream.abort(), LINGER_AFTER_ANSWER_MS);
    upstream.body.once('close', () => clearTimeout(linger));
    const done = () => settle({ kind: 'complete' });
    void (tap.finishAfterClientLeft?.() ?? Promise.resolve()).then(done, done);
  };

  source.on('data', (chunk: Buffer) => {
    if (state === 'reading-on') return readOn(redactor.write(chunk));
    if (tap.answered) return;
    const safe = redactor.write(chunk);
    if (safe.length && !tap.write(safe)) source.pause();
  });
  tap.on('drain', () => source.resume());
  // The terminal event went to the client: the answer ends there. A provider connection that stays
  // open after it (some do) is read and dropped for a moment, then closed; a client that leaves now leaves a complete answer.
  tap.once('answered', () => {
    if (state !== 'flowing') return;
    state = 'ending';
    flushRedactor();
    tap.end();
    source.resume();
    const linger = setTimeout(() => upstream.abort(), LINGER_AFTER_ANSWER_MS);
    upstream.body.once('close', () => clearTimeout(linger));
  });
  source.on('end', () => {
    if (state === 'reading-on') {
      readOn(redactor.end());
      if (!terminalRead) leftAfterAnswer('the provider ended its stream without its terminal event');
      return;
    }
    if (state !== 'flowing') return;
    state = 'ending';
    flushRedactor();
    tap.end();
  });
  transcoder?.on('error', (error) => {
    // The rest of the body is drained, not aborted: an aborted body would end the client's stream before its error event.
    upstream.body.unpipe(transcoder);
    upstream.body.resume();
    cut(`could not decode the upstream body: ${error.message}`, 'closed');
  });
  upstream.body.on('close', () => {
    clearTimeout(stallTimer);
    if (state === 'reading-on' && !upstream.body.complete && !terminalRead)
      return leftAfterAnswer(
        timeUp && deadline ? deadline.reason : stalled ? 'the provider stalled' : 'the provider closed its connection',
      );
    if (upstream.body.complete || state !== 'flowing') return;
    flushRedactor();
    if (timeUp && deadline) cut(deadline.reason, 'stalled');
    else if (stalled) cut(`upstream stalled for more than ${Math.round(stallMs / 1000)} s`, 'stalled');
    else cut('upstream connection closed mid-response', 'closed');
  });
  tap.on('end', () => settle({ kind: 'complete' }));
  tap.on('close', () => {
    if (state === 'done') return;
    if (tap.answered) return settle({ kind: 'complete' });
    if (state === 'flowing' && tap.answerEnded && (mayReadOn?.() ?? true)) {
      // The answer is whole, but its usage (which the proxy may have asked for itself) and terminal event are
      // still on the way: read them for the row's exact usage and the cache, for a bounded time.
      state = 'reading-on';
      readOnTimer = setTimeout(() => {
        upstream.abort();
        leftAfterAnswer(`the provider's usage did not follow within ${READ_ON_AFTER_ANSWER_MS / 1000} s`);
      }, READ_ON_AFTER_ANSWER_MS);
      source.resume();
      return;
    }
    // The client went away: stop paying for tokens nobody will read.
    upstream.abort();
    settle({ kind: 'client-gone', reason: 'client disconnected' });
  });
}
