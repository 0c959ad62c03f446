/**
 * Cost-attribution tags (docs/tags.md): `key=value` pairs a request sends in `x-proxy-tags`, or a
 * token carries for every request it makes. Every row keeps them as a map; logs filter by them,
 * stats roll them up and budgets may be set per tag value.
 */
import { withUnsafeEscaped } from '../base/plain-text';

export type Tags = Record<string, string>;

export const TAG_HEADER = 'x-proxy-tags';
export const MAX_TAGS = 10;
export const MAX_KEY_CHARS = 40;
export const MAX_VALUE_CHARS = 100;
/** Stats count values past a key's cap under this name (docs/tags.md, "Stats"), so no one may send it. */
export const OVERFLOW_VALUE = '(other)';

const KEY = /^[a-z0-9_.-]+$/;
/** Printable ASCII, spaces inside included; the comma separates pairs in the header. */
const VALUE = /^[\x20-\x2b\x2d-\x7e]+$/;

export type TagsCheck = { ok: true; tags: Tags } | { ok: false; message: string };

const quote = (text: string) => JSON.stringify(withUnsafeEscaped(text.length > 60 ? `${text.slice(0, 60)}…` : text));

/** Why one key is unacceptable, or undefined. `where` names the field in the message. */
export function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'a tag key is empty';
  if (key.length > MAX_KEY_CHARS || !KEY.test(key))
    return `tag key ${quote(key)} must be 1 to ${MAX_KEY_CHARS} lowercase letters, digits, "_", "-" or "."`;
  return undefined;
}

/** Why one value is unacceptable, or undefined. */
export function valueProblem(key: string, value: string): string | undefined {
  if (value.length === 0) return `tag ${quote(key)} has an empty value`;
  if (value.length > MAX_VALUE_CHARS)
    return `the value of tag ${quote(key)} is longer than ${MAX_VALUE_CHARS} characters`;
  if (!VALUE.test(value)) return `the value of tag ${quote(key)} must be printable ASCII characters other than ","`;
  if (value !== value.trim()) return `the value of tag ${quote(key)} must not start or end with a space`;
  if (value === OVERFLOW_VALUE)
    return `the value ${OVERFLOW_VALUE} is reserved (stats use it for values past a key's limit)`;
  return undefined;
}

/**
 * `x-proxy-tags: team=search, feature=autocomplete`: comma-separated `key=value` pairs, at most
 * ten, each key once. Spaces around pairs, keys and values are ignored; a value may hold `=`.
 * An absent or blank header is no tags.
 */
export function parseTagHeader(header: string | undefined): TagsCheck {
  const tags: Tags = {};
  if (header === undefined || header.trim() === '') return { ok: true, tags };
  const pairs = header.split(',');
  if (pairs.length > MAX_TAGS)
    return { ok: false, message: `${TAG_HEADER}: at most ${MAX_TAGS} tags, got ${pairs.length}.` };
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals < 0)
      return {
        ok: false,
        message: `${TAG_HEADER}: ${quote(pair.trim())} is not a key=value pair (pairs are separated by commas).`,
      };
    const key = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    const problem = keyProblem(key) ?? valueProblem(key, value);
    if (problem) return { ok: false, message: `${TAG_HEADER}: ${problem}.` };
    if (Object.hasOwn(tags, key)) return { ok: false, message: `${TAG_HEADER}: tag ${quote(key)} is given twice.` };
    tags[key] = value;
  }
  return { ok: true, tags };
}

/** A tag map from a management body (`{"team": "search"}`), with the same rules as the header. `field` names it in messages. */
export function checkTagMap(value: unknown, field: string): TagsCheck {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, message: `${field} must be an object of tag keys to string values, e.g. {"team": "search"}.` };
  const entries = Object.entries(value);
  if (entries.length > MAX_TAGS)
    return { ok: false, message: `${field}: at most ${MAX_TAGS} tags, got ${entries.length}.` };
  const tags: Tags = {};
  for (const [key, tagValue] of entries) {
    if (typeof tagValue !== 'string') return { ok: false, message: `${field}.${key}: a tag value must be a string.` };
    const problem = keyProblem(key) ?? valueProblem(key, tagValue);
    if (problem) return { ok: false, message: `${field}: ${problem}.` };
    tags[key] = tagValue;
  }
  return { ok: true, tags };
}

/**
 * A request's tags joined with its token's: the token's own tags always win, so a request that
 * names one of the token's keys is refused (the key is returned) rather than silently overridden.
 */
export function joinTags(tokenTags: Tags | undefined, requestTags: Tags): { tags: Tags } | { conflict: string } {
  const own = tokenTags ?? {};
  const conflict = Object.keys(requestTags).find((key) => Object.hasOwn(own, key));
  if (conflict !== undefined) return { conflict };
  return { tags: { ...requestTags, ...own } };
}

/** Tags as one line, keys sorted: the header's own format (`feature=autocomplete,team=search`), as the CSV export writes them. */
export function formatTags(tags: Tags | undefined): string {
  return Object.keys(tags ?? {})
    .sort()
    .map((key) => `${key}=${tags![key]}`)
    .join(',');
}

/** A tag map read back from the store, keeping only string values under valid keys. */
export function tagsFrom(value: unknown): Tags | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const tags: Tags = {};
  for (const [key, tagValue] of Object.entries(value))
    if (typeof tagValue === 'string' && keyProblem(key) === undefined) tags[key] = tagValue;
  return Object.keys(tags).length ? tags : undefined;
}
