import { UpstreamTimeoutError, UpstreamUnreachableError } from '../base/errors';
import { describeError, type Logger } from '../base/logger';
import { NO_USAGE, type Usage } from '../providers/usage';
import { cacheStatusHeader, type CacheStatus } from './cache-mode';
import { isCacheableStatus, type CachedResponse, type CachedResponseMeta, type CacheWriter } from './response-cache';
import type { LeaderFlight } from './single-flight';

/** How long the client's last bytes may wait for the entry to become visible; past it the commit finishes in the background. */
const COMMIT_WAIT_MS = 2_000;

/** The provider's answer, as far as the cache needs to know it before the body. */
export interface UpstreamAnswer {
  status: number;
  contentType: string;
  /** `opaque`: a body neither JSON nor a stream (a download), never stored. */
  format: 'json' | 'sse' | 'eventstream' | 'opaque';
}

/** What the body said once it ended. */
export interface AnswerOutcome {
  /** The body ended as its format says it should (not cut off, parsable). */
  complete: boolean;
  /**
   * The provider reported an error inside the body (a stream's error event or exception frame,
   * a Responses `response.failed`): the answer failed even when its terminal event came.
   */
  error?: string;
  model?: string;
  usage?: Usage;
}

/** Per request: where the background commit is tracked, what the answer cost, and the id logs carry. */
export interface FillContext {
  requestId: string;
  track(work: Promise<unknown>): void;
  /** The answer's cost in nano-USD, stored so a later hit can report what it saved. */
  costNanos(model: string | undefined, usage: Usage): number;
}

export interface FillSettings {
  status: CacheStatus | undefined;
  /** Opens the store's writer once the answer is known; absent when this request stores nothing. */
  open?: () => CacheWriter;
  ttlSeconds: number;
  /** Set when identical requests wait for this one's answer (single flight). */
  flight?: LeaderFlight<CachedResponse>;
  /**
   * What is left of the upstream time limit for a request that waited for an identical one
   * first (single flight): its own limit runs from its arrival. Absent: the whole limit.
   */
  timeLimitMs?: number;
}

type AnswerHead = Pick<CachedResponseMeta, 'format' | 'status' | 'contentType'>;

type Stage =
  | { name: 'waiting' }
  | { name: 'passing' }
  | { name: 'writing'; writer: CacheWriter; head: AnswerHead }
  | { name: 'committing' }
  | { name: 'done' };

/**
 * The cache's side of a forwarded request: it names the `x-proxy-cache` status of the
 * answer, stores a cacheable answer as it streams (`begin` → `append` → `finish`), and
 * releases identical requests waiting on it. Every way out other than a commit goes
 * through `abandon`, which is safe to call at any time: once a commit has started it
 * does nothing, so a client leaving after the last byte can't undo a stored answer.
 *
 *   waiting ─begin─▶ writing ─finish─▶ committing ─▶ done
 *      │               └── abandon / incomplete / error ──▶ done
 *      └─begin (not stored)─▶ passing ─abandon─▶ done
 */
export class CacheFill {
  private stage: Stage = { name: 'waiting' };
  /** The body as text, kept only while followers wait for it. */
  private readonly chunks?: string[];

  constructor(
    private readonly settings: FillSettings,
    private readonly context: FillContext,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    if (settings.flight) this.chunks = [];
  }

  /** The answer's `x-proxy-cache` header (none when the request did not ask for the cache). */
  get statusHeader(): Record<string, string> {
    return cacheStatusHeader(this.settings.status);
  }

  /** How long the provider may take to answer this request (ms); undefined: the configured limit. */
  get timeLimitMs(): number | undefined {
    return this.settings.timeLimitMs;
  }

  /** The provider answered: the fill itself when this answer is stored (to be given the body's text and its end), else nothing. */
  begin(answer: UpstreamAnswer): this | undefined {
    if (this.stage.name !== 'waiting') return undefined;
    const { open, flight } = this.settings;
    if (!open || !isCacheableStatus(answer.status) || answer.format === 'opaque') {
      this.stage = { name: 'passing' };
      // Nothing will be shared: waiting requests go on now, not after this body.
      flight?.fail();
      return undefined;
    }
    flight?.answering();
    this.stage = {
      name: 'writing',
      writer: open(),
      head: { format: answer.format, status: answer.status, contentType: answer.contentType },
    };
    return this;
  }

  /** The next piece of the body's text, exactly as the client receives it. */
  append(text: string): void {
    if (this.stage.name !== 'writing') return;
    this.stage.writer.append(text);
    this.chunks?.push(text);
  }

  /**
   * The last upstream byte is in: a complete answer is committed; an incomplete one, or one
   * that reported an error inside it (a later identical request must reach the provider), is
   * dropped. Resolves once readers can see the entry, or after a short bound, so
   * the client's stream never waits long for the store.
   */
  async finish(outcome: AnswerOutcome): Promise<void> {
    const stage = this.stage;
    if (stage.name !== 'writing') return;
    if (!outcome.complete || outcome.error !== undefined) return this.abandon();
    this.stage = { name: 'committing' };
    const usage = outcome.usage ?? NO_USAGE;
    const meta: CachedResponseMeta = {
      ...stage.head,
      model: outcome.model,
      usage,
      costNanos: this.context.costNanos(outcome.model, usage),
      storedAt: this.now(),
    };
    const commit = this.commit(stage.writer, meta);
    this.context.track(commit);
    await Promise.race([commit, new Promise((resolve) => setTimeout(resolve, COMMIT_WAIT_MS).unref())]);
  }

  /**
   * Nothing will be stored: the upstream call failed (`error`), the body was cut, the client left,
   * or it was never cacheable. A provider that timed out or could not be reached is the answer
   * identical requests waiting on this one get too: calling it again would only wait as long.
   */
  abandon(error?: unknown): void {
    const stage = this.stage;
    if (stage.name === 'committing' || stage.name === 'done') return;
    this.stage = { name: 'done' };
    if (stage.name === 'writing') stage.writer.abort();
    const shared = error instanceof UpstreamTimeoutError || error instanceof UpstreamUnreachableError;
    this.settings.flight?.fail(shared ? error : undefined);
  }

  private async commit(writer: CacheWriter, meta: CachedResponseMeta): Promise<void> {
    await writer
      .commit(meta)
      .catch((error) =>
        this.log.warn('response not cached', { request_id: this.context.requestId, ...describeError(error) }),
      );
    this.stage = { name: 'done' };
    // Followers are released once the entry is visible, so no identical request slips in between.
    // With max-age=0 nothing is stored, and nothing is shared either.
    if (this.settings.ttlSeconds > 0) this.settings.flight?.complete({ ...meta, body: this.chunks?.join('') ?? '' });
    else this.settings.flight?.fail();
  }
}
