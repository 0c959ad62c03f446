/**
 * The rate limit's sliding minute (docs/errors-and-limits.md, "The rate limit"): a request is
 * admitted when fewer than `limit` requests of its token were admitted in the 60 seconds before
 * it, so no 60-second span ever holds more than `limit` admitted requests, and a token that never
 * sends more than `limit` in 60 seconds is never refused.
 *
 * The gate item keeps the admission times of the current clock minute and the one before in one
 * string set per minute (`a<minute start, epoch s>`; entries `<ms into the minute>.<unique>`).
 * Times older than the previous minute can't be inside the window, so two sets are all it needs.
 * A condition can count a set (`size`) but not compare its members, so the count of the previous
 * minute's requests still inside the window is worked out here from a copy of that set — frozen
 * once its minute is over — and the condition on the current set uses the room that leaves.
 */
export const WINDOW_MS = 60_000;

export const minuteAttribute = (minuteStart: number) => `a${minuteStart / 1000}`;
/** This version's minute sets, and the per-minute counters of the version before (removed on sight). */
export const WINDOW_ATTRIBUTE = /^[aw]\d+$/;

export const minuteStartOf = (now: number) => Math.floor(now / WINDOW_MS) * WINDOW_MS;

/** An admission time as a set member: unique even for two requests in the same millisecond. */
export function entryFor(now: number, unique: string): string {
  return `${now - minuteStartOf(now)}.${unique}`;
}

/** The admission times (epoch ms) a minute's set holds. */
export function timesIn(set: unknown, minuteStart: number): number[] {
  if (!(set instanceof Set)) return [];
  return [...(set as Set<string>)].map((entry) => minuteStart + Number(entry.slice(0, entry.indexOf('.'))));
}

/**
 * Admission times inside the window that ends at `now` (the 60 s before it). A time after `now`
 * (another instance admitted a request a moment later) counts too, as the condition's `size` does.
 */
export function inWindow(times: readonly number[], now: number): number[] {
  return times.filter((time) => time > now - WINDOW_MS);
}

/**
 * What a condition needs to admit exactly: `known` is the number of the previous minute's
 * requests inside the window (from a copy of its set). Without a copy, the condition takes the
 * previous set's size, rounded up to a step of a tenth of the limit, as if all of it were inside:
 * it may refuse a request that is under the limit, and the gate then checks the exact count from
 * the item the refusal returns and asks again (the only case with a second store call).
 */
export function roomCondition(
  limit: number,
  known: number | undefined,
): { expression: string; values: Record<string, number>; readsPrevious: boolean } {
  const current = (room: number, name: string) =>
    room > 0 ? `(attribute_not_exists(#cur) OR size(#cur) < ${name})` : `size(#cur) < ${name}`;
  if (known !== undefined)
    return { expression: current(limit - known, ':room'), values: { ':room': limit - known }, readsPrevious: false };
  const step = Math.max(1, Math.ceil(limit / 10));
  const clauses: string[] = [];
  const values: Record<string, number> = {};
  for (let j = 0; j * step < limit; j++) {
    if (j > 0) values[`:prev${j}`] = j * step;
    values[`:room${j}`] = limit - j * step;
    const previous =
      j === 0 ? 'attribute_not_exists(#prev)' : `(attribute_not_exists(#prev) OR size(#prev) <= :prev${j})`;
    clauses.push(`(${previous} AND ${current(limit - j * step, `:room${j}`)})`);
  }
  // DynamoDB refuses redundant parentheses, so one clause (a limit below 2) stands alone.
  const expression = clauses.length === 1 ? clauses[0] : `(${clauses.join(' OR ')})`;
  return { expression, values, readsPrevious: true };
}

/**
 * The `x-ratelimit-*` figures after a decision: what is left of the window ending now, and the
 * epoch second at which the oldest request counted in it leaves it (when room grows again; now,
 * for a window that is empty).
 */
export function windowFigures(
  limit: number,
  counted: readonly number[],
  now: number,
): { remaining: number; resetAt: number } {
  const oldest = counted.length ? Math.min(...counted) : now - WINDOW_MS;
  return { remaining: Math.max(0, limit - counted.length), resetAt: Math.ceil((oldest + WINDOW_MS) / 1000) };
}
