/**
 * In-process single flight: of the identical requests in flight at the same
 * time on this instance, the first (the leader) calls upstream and the others
 * (followers) wait for its answer in memory instead of calling too.
 *
 * Followers never depend on the leader for correctness: when the leader fails,
 * its answer can't be shared, or it takes longer than the wait bound, they get
 * `undefined` and proceed as if they had missed.
 */
export interface LeaderFlight<T> {
  leader: true;
  /** Hands the answer to every follower and ends the flight. Only the first `complete`/`fail` counts. */
  complete(value: T): void;
  /** Ends the flight without an answer (upstream error, not cacheable, cut off, client gone). */
  fail(): void;
}

export interface FollowerFlight<T> {
  leader: false;
  /** The leader's answer, or undefined when there is none within the wait bound. */
  result: Promise<T | undefined>;
}

export type Flight<T> = LeaderFlight<T> | FollowerFlight<T>;

interface PendingFlight<T> {
  answer: Promise<T | undefined>;
  settle(value: T | undefined): void;
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
   * @param waitTimeoutMs how long a follower waits for the leader before going upstream itself (the upstream timeout)
   * @param maxFlightMs after this long a flight ends without an answer, so a key can't stay taken
   */
  constructor(
    private readonly waitTimeoutMs: number,
    private readonly maxFlightMs: number = DEFAULT_MAX_FLIGHT_MS,
  ) {}

  /**
   * Leads the flight for `key` if none is in progress, else follows it.
   * Synchronous, so two requests can't both become leader.
   */
  join(key: string, options: { signal?: AbortSignal } = {}): Flight<T> {
    const existing = this.flights.get(key);
    if (existing) return { leader: false, result: this.follow(existing, options.signal) };
    const flight = this.start(key);
    return { leader: true, complete: (value) => flight.settle(value), fail: () => flight.settle(undefined) };
  }

  /** Flights in progress. */
  get size(): number {
    return this.flights.size;
  }

  private start(key: string): PendingFlight<T> {
    let resolve!: (value: T | undefined) => void;
    let settled = false;
    const flight: PendingFlight<T> = {
      answer: new Promise((r) => (resolve = r)),
      settle: (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(expiry);
        // A flight that expired may have been replaced by a newer one for the same key: leave that one alone.
        const forget = () => {
          if (this.flights.get(key) === flight) this.flights.delete(key);
        };
        if (value === undefined) forget();
        else setTimeout(forget, ANSWER_LINGER_MS).unref();
        resolve(value);
      },
    };
    const expiry = setTimeout(() => flight.settle(undefined), this.maxFlightMs);
    expiry.unref();
    this.flights.set(key, flight);
    return flight;
  }

  private follow(flight: PendingFlight<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
    return new Promise((resolve) => {
      const done = (value: T | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
        resolve(value);
      };
      const giveUp = () => done(undefined);
      const timer = setTimeout(giveUp, this.waitTimeoutMs);
      timer.unref();
      if (signal?.aborted) return giveUp();
      signal?.addEventListener('abort', giveUp, { once: true });
      void flight.answer.then(done);
    });
  }
}
