/**
 * In-process single flight: of the identical requests in flight at the same
 * time on this instance, the first (the leader) calls upstream and the others
 * (followers) wait for its answer in memory instead of calling too.
 *
 * A follower is held to the upstream time limit from its own arrival, as if it
 * had called the provider itself (docs/caching.md, "Concurrent identical requests"):
 * - the leader's answer is stored: the follower is served it;
 * - the leader's provider timed out or could not be reached: the follower gets
 *   the same error when the leader does, without calling the provider again;
 * - the leader ended without an answer to share (not cacheable, cut off, client
 *   gone): the followers go on as a new flight, one of them calling the provider
 *   with what is left of its own limit;
 * - the leader's provider is answering, slowly (a long stream), and half the
 *   follower's limit has passed: the follower calls the provider itself with the
 *   half that is left, so it too answers within its limit;
 * - the follower's limit passes while the leader's provider has not answered:
 *   the follower answers that the provider timed out.
 */
export interface LeaderFlight<T> {
  leader: true;
  /** The provider's answer has begun (its headers are in): the upstream is answering. */
  answering(): void;
  /** Hands the answer to every follower and ends the flight. Only the first `complete`/`fail` counts. */
  complete(value: T): void;
  /**
   * Ends the flight without an answer. `shared`: the outcome every follower gets too (the
   * provider timed out or could not be reached); without it, followers go on without the leader.
   */
  fail(shared?: Error): void;
}

/** What a follower does once it stops waiting. */
export type FollowerOutcome<T> =
  | { kind: 'answer'; value: T }
  /** The leader's own outcome (its provider timed out or was unreachable): answer with it. */
  | { kind: 'failed'; error: Error }
  /** No answer to share: call the provider within `timeLeftMs`. */
  | { kind: 'forward'; timeLeftMs: number; flight?: LeaderFlight<T> }
  /** The follower's own limit passed before the provider answered the leader. */
  | { kind: 'timed-out' };

export interface FollowerFlight<T> {
  leader: false;
  outcome: Promise<FollowerOutcome<T>>;
}

export type Flight<T> = LeaderFlight<T> | FollowerFlight<T>;

type Settled<T> = { value: T } | { error?: Error };

interface PendingFlight<T> {
  settled: Promise<Settled<T>>;
  settle(outcome: Settled<T>): void;
  /** True once the leader's provider has begun its answer. */
  answering: boolean;
  /** Resolves when the leader's provider begins its answer. */
  answered: Promise<void>;
  markAnswering(): void;
}

/** A leader that never settles (a bug) must not pin its key forever; no real flight lasts this long. */
const DEFAULT_MAX_FLIGHT_MS = 15 * 60 * 1000;

/**
 * An answered flight stays joinable this long: a request whose cache lookup
 * started just before the entry was committed still gets the answer instead
 * of calling upstream again.
 */
const ANSWER_LINGER_MS = 3_000;

export class SingleFlight<T> {
  private readonly flights = new Map<string, PendingFlight<T>>();

  /**
   * @param timeLimitMs the upstream time limit: how long a follower waits, from its arrival, for the provider to answer
   * @param maxFlightMs after this long a flight ends without an answer, so a key can't stay taken
   * @param now the clock a follower's time left is read from (epoch ms)
   */
  constructor(
    readonly timeLimitMs: number,
    private readonly maxFlightMs: number = DEFAULT_MAX_FLIGHT_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Leads the flight for `key` if none is in progress, else follows it.
   * Synchronous, so two requests can't both become leader.
   */
  join(key: string, options: { signal?: AbortSignal } = {}): Flight<T> {
    const existing = this.flights.get(key);
    if (!existing) return this.lead(key);
    const deadline = this.now() + this.timeLimitMs;
    this.followers++;
    const outcome = this.follow(key, existing, deadline, options.signal);
    void outcome.finally(() => this.followers--);
    return { leader: false, outcome };
  }

  /** Flights in progress. */
  get size(): number {
    return this.flights.size;
  }

  /** Followers waiting, over all flights. */
  get waiting(): number {
    return this.followers;
  }

  private followers = 0;

  private lead(key: string): LeaderFlight<T> {
    const flight = this.start(key);
    return {
      leader: true,
      answering: () => flight.markAnswering(),
      complete: (value) => flight.settle({ value }),
      fail: (shared) => flight.settle({ error: shared }),
    };
  }

  private start(key: string): PendingFlight<T> {
    let resolve!: (outcome: Settled<T>) => void;
    let answered!: () => void;
    let settled = false;
    const flight: PendingFlight<T> = {
      settled: new Promise((r) => (resolve = r)),
      answering: false,
      answered: new Promise((r) => (answered = r)),
      markAnswering: () => {
        flight.answering = true;
        answered();
      },
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(expiry);
        // A flight that expired may have been replaced by a newer one for the same key: leave that one alone.
        const forget = () => {
          if (this.flights.get(key) === flight) this.flights.delete(key);
        };
        if ('value' in outcome) setTimeout(forget, ANSWER_LINGER_MS).unref();
        else forget();
        resolve(outcome);
      },
    };
    const expiry = setTimeout(() => flight.settle({}), this.maxFlightMs);
    expiry.unref();
    this.flights.set(key, flight);
    return flight;
  }

  /**
   * Waits for the flight until `deadline`. A flight that ends with nothing to share is
   * joined again: the first follower back leads the next one, the others follow it, all
   * still held to their own deadlines.
   */
  private async follow(
    key: string,
    flight: PendingFlight<T>,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<FollowerOutcome<T>> {
    for (;;) {
      const settled = await this.settledBy(flight, deadline, signal);
      if (settled === 'gone') return { kind: 'forward', timeLeftMs: this.timeLeft(deadline) };
      if (settled === 'deadline') return { kind: 'timed-out' };
      if (settled === 'streaming') {
        // The provider is answering the leader, slowly (a long stream): this request calls it
        // too, with what is left of its own limit, rather than wait for an answer that may come
        // after that limit.
        const timeLeftMs = this.timeLeft(deadline);
        return timeLeftMs > 0 ? { kind: 'forward', timeLeftMs } : { kind: 'timed-out' };
      }
      if ('value' in settled) return { kind: 'answer', value: settled.value };
      if (settled.error) return { kind: 'failed', error: settled.error };
      const timeLeftMs = this.timeLeft(deadline);
      if (timeLeftMs <= 0) return { kind: 'timed-out' };
      const next = this.flights.get(key);
      if (!next) return { kind: 'forward', timeLeftMs, flight: this.lead(key) };
      flight = next;
    }
  }

  /**
   * What ends the wait first: the flight's outcome, the follower's deadline, its client leaving,
   * or ('streaming') the leader's provider answering once half the follower's limit has passed.
   */
  private settledBy(
    flight: PendingFlight<T>,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<Settled<T> | 'deadline' | 'gone' | 'streaming'> {
    const patience = deadline - this.timeLimitMs / 2;
    return new Promise((resolve) => {
      let finished = false;
      let impatience: ReturnType<typeof setTimeout> | undefined;
      const done = (outcome: Settled<T> | 'deadline' | 'gone' | 'streaming') => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        clearTimeout(impatience);
        signal?.removeEventListener('abort', giveUp);
        resolve(outcome);
      };
      const giveUp = () => done('gone');
      const timer = setTimeout(() => done('deadline'), Math.max(0, deadline - this.now()));
      timer.unref();
      // Once the leader's provider answers, its answer is waited for a while: a JSON body follows its
      // headers at once, a stream may last minutes. The follower leaves at half its limit, or at half
      // of what was left when the answer began, whichever is later, so its own call has time too.
      void flight.answered.then(() => {
        if (finished) return;
        const now = this.now();
        const leaveAt = Math.max(patience, now + (deadline - now) / 2);
        impatience = setTimeout(() => done('streaming'), Math.max(0, leaveAt - now));
        impatience.unref();
      });
      if (signal?.aborted) return giveUp();
      signal?.addEventListener('abort', giveUp, { once: true });
      void flight.settled.then(done);
    });
  }

  private timeLeft(deadline: number): number {
    return Math.max(0, deadline - this.now());
  }
}
