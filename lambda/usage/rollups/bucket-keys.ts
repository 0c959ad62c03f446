/**
 * Sort keys of the rollup items (table `usageStats`, partition `account_id`):
 *
 *   H#2026-11-21T13#<provider>#<model>#<requester>#<token id>#<kind>   one UTC hour
 *   D#2026-11-21#<provider>#<model>#<requester>#<token id>#<kind>      one UTC day
 *
 * The time comes first and has a fixed width, so all the buckets of an hour (or
 * a day) are one contiguous key range, read with one `BETWEEN` query and no
 * filter (`periodUnits`). `#` and `%` inside values are percent-escaped, so the
 * key splits back into its parts.
 */
export type Granularity = 'H' | 'D';

export interface BucketDimensions {
  provider: string;
  model: string;
  /** "" when the request had no `x-proxy-user`. */
  requester: string;
  /** The proxy token that sent the request; "" in buckets written before tokens were counted. */
  token: string;
  /** The endpoint kind (`chat`, `responses`, …); "" in buckets written before kinds were counted. */
  kind: string;
}

export interface ParsedBucketKey extends BucketDimensions {
  granularity: Granularity;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  /** UTC hour, `YYYY-MM-DDTHH`, of an hourly bucket. */
  hour?: string;
}

/** An inclusive sort-key range for `bucket BETWEEN lower AND upper`. */
export interface KeyRange {
  lower: string;
  upper: string;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Labels are cut to this many characters so a key stays below DynamoDB's
 * 1024-byte sort-key limit: the model and requester take at most
 * 2 × 100 characters × 4 bytes, even fully escaped; provider and token ids are short ASCII.
 */
export const MAX_LABEL_CHARS = 100;

/** `#` separates the parts of a key; `%` is escaped too, so unescaping is exact. */
export function escapeSegment(value: string): string {
  return Array.from(value)
    .slice(0, MAX_LABEL_CHARS)
    .join('')
    .replace(/[%#]/g, (c) => (c === '%' ? '%25' : '%23'));
}

export function unescapeSegment(value: string): string {
  return value.replace(/%2[35]/g, (code) => (code === '%25' ? '%' : '#'));
}

function dimensionsSuffix(dims: BucketDimensions): string {
  return [dims.provider, dims.model, dims.requester, dims.token, dims.kind].map(escapeSegment).join('#');
}

function hourStamp(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 13);
}

function dayStamp(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

export function hourKey(at: Date, dims: BucketDimensions): string {
  return `H#${hourStamp(at)}#${dimensionsSuffix(dims)}`;
}

export function dayKey(at: Date, dims: BucketDimensions): string {
  return `D#${dayStamp(at)}#${dimensionsSuffix(dims)}`;
}

/**
 * Tag rollups (docs/tags.md, "Stats"): one item per UTC hour or day, tag key and value, in the
 * same partition and the same key ranges as the buckets above, so a period's summary reads them
 * with the same queries:
 *
 *   H#2026-11-21T13#~tag#<key>#<value>    D#2026-11-21#~tag#<key>#<value>
 *
 * `~tag` is never a provider id, and a row counts once under each of its tags, apart from the
 * buckets above, which count each row once in all.
 */
const TAG_MARK = '~tag';

export function tagBucketKeys(at: Date, key: string, value: string): string[] {
  const tag = `${TAG_MARK}#${escapeSegment(key)}#${escapeSegment(value)}`;
  return [`H#${hourStamp(at)}#${tag}`, `D#${dayStamp(at)}#${tag}`];
}

export interface ParsedTagBucketKey {
  day: string;
  hour?: string;
  key: string;
  value: string;
}

/** The tag and time of a tag rollup's key; undefined for any other bucket. */
export function parseTagBucketKey(bucket: string): ParsedTagBucketKey | undefined {
  const [granularity, time, mark, key, value, ...rest] = bucket.split('#');
  if (mark !== TAG_MARK) return undefined;
  if ((granularity !== 'H' && granularity !== 'D') || time === undefined || value === undefined || rest.length > 0)
    throw new Error(`Not a tag rollup key: ${bucket}`);
  return {
    day: time.slice(0, 10),
    ...(granularity === 'H' ? { hour: time } : {}),
    key: unescapeSegment(key),
    value: unescapeSegment(value),
  };
}

/** UTC day, `YYYY-MM-DD`, of a row's time: the period over which tag values are capped. */
export const dayOf = (at: Date | number) => dayStamp(at);

/** Keys written before tokens or kinds were counted lack those parts: they count as "". */
export function parseBucketKey(key: string): ParsedBucketKey {
  const [granularity, time, provider, model, requester, token = '', kind = '', ...rest] = key.split('#');
  if (
    (granularity !== 'H' && granularity !== 'D') ||
    time === undefined ||
    requester === undefined ||
    rest.length > 0
  ) {
    throw new Error(`Not a usage rollup key: ${key}`);
  }
  return {
    granularity,
    day: time.slice(0, 10),
    ...(granularity === 'H' ? { hour: time } : {}),
    provider: unescapeSegment(provider),
    model: unescapeSegment(model),
    requester: unescapeSegment(requester),
    token: unescapeSegment(token),
    kind: unescapeSegment(kind),
  };
}

/**
 * Rollups are hourly, so a period is widened to whole UTC hours: `from` down,
 * `to` up. The answer echoes the widened period.
 */
export function effectivePeriod(from: Date, to: Date): { from: Date; to: Date } {
  return {
    from: new Date(Math.floor(from.getTime() / HOUR_MS) * HOUR_MS),
    to: new Date(Math.ceil(to.getTime() / HOUR_MS) * HOUR_MS),
  };
}

/** Periods up to this long are read (and charted) hour by hour. */
export const MAX_HOURLY_SPAN_MS = 2 * DAY_MS;

/** True when the whole-hour period is short enough for hourly buckets. */
export function isHourlyPeriod(from: Date, to: Date): boolean {
  return to.getTime() - from.getTime() <= MAX_HOURLY_SPAN_MS;
}

/** One UTC hour or day of a period, and the key range of its rollup items. */
export interface PeriodUnit {
  granularity: Granularity;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  /** UTC hour, `YYYY-MM-DDTHH`, of an hour. */
  hour?: string;
  startMs: number;
  endMs: number;
  /** Its items (tag rollups included): '$' sorts right after '#', so `<prefix>$` is above every key of the unit and below the next one's. */
  items: KeyRange;
}

function hourUnit(startMs: number): PeriodUnit {
  const hour = hourStamp(startMs);
  return {
    granularity: 'H',
    day: dayStamp(startMs),
    hour,
    startMs,
    endMs: startMs + HOUR_MS,
    items: { lower: `H#${hour}#`, upper: `H#${hour}$` },
  };
}

function dayUnit(startMs: number): PeriodUnit {
  const day = dayStamp(startMs);
  return { granularity: 'D', day, startMs, endMs: startMs + DAY_MS, items: { lower: `D#${day}#`, upper: `D#${day}$` } };
}

function hourUnits(fromMs: number, toMs: number): PeriodUnit[] {
  const units: PeriodUnit[] = [];
  for (let t = fromMs; t < toMs; t += HOUR_MS) units.push(hourUnit(t));
  return units;
}

/**
 * The hours and days that cover a whole-hour period [from, to) exactly once, in time order. A period
 * of at most two days is all hours, so it can be charted per hour. A longer one is its whole UTC
 * days, and the hours of the partial days at either edge (at most 23 each).
 */
export function periodUnits(from: Date, to: Date): PeriodUnit[] {
  const fromMs = from.getTime();
  const toMs = to.getTime();
  if (!(fromMs < toMs)) return [];
  if (isHourlyPeriod(from, to)) return hourUnits(fromMs, toMs);
  const firstWholeDay = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const wholeDaysEnd = Math.floor(toMs / DAY_MS) * DAY_MS;
  const days: PeriodUnit[] = [];
  for (let t = firstWholeDay; t < wholeDaysEnd; t += DAY_MS) days.push(dayUnit(t));
  return [...hourUnits(fromMs, firstWholeDay), ...days, ...hourUnits(wholeDaysEnd, toMs)];
}

/** The hour or day a rollup item (or tag rollup) counts in. */
export function unitOfBucket(bucket: string): PeriodUnit {
  const [granularity, stamp = ''] = bucket.split('#');
  if (granularity === 'H') return hourUnit(Date.parse(`${stamp}:00:00Z`));
  if (granularity === 'D') return dayUnit(Date.parse(`${stamp}T00:00:00Z`));
  throw new Error(`Not a usage rollup key: ${bucket}`);
}

/** Every UTC hour (`YYYY-MM-DDTHH`) of the whole-hour period [from, to), ascending. */
export function utcHours(from: Date, to: Date): string[] {
  const hours: string[] = [];
  for (let t = from.getTime(); t < to.getTime(); t += HOUR_MS) hours.push(hourStamp(t));
  return hours;
}

/** Every UTC day that [from, to) touches, ascending. */
export function utcDays(from: Date, to: Date): string[] {
  const days: string[] = [];
  const last = to.getTime() - 1;
  for (let day = Math.floor(from.getTime() / DAY_MS) * DAY_MS; day <= last; day += DAY_MS) days.push(dayStamp(day));
  return days;
}
