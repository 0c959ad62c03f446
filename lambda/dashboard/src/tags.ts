/**
 * Tags as the dashboard reads and writes them (docs/tags.md): `key=value` pairs, the format of the
 * `x-proxy-tags` header. Only the shape is checked here; every other rule is the server's, whose
 * messages name the problem and are shown as they come.
 */
import type { Tags } from './types';

/** A map's pairs with keys sorted, as the CSV export and the header write them. */
export function sortedTags(tags: Tags | undefined): [key: string, value: string][] {
  return Object.entries(tags ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `team=search, feature=autocomplete` for a map (`""` for none). */
export function formatTagList(tags: Tags | undefined): string {
  return sortedTags(tags)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

export type TagListParse = { ok: true; tags: Tags } | { ok: false; message: string };

/** One `key=value` pair (the value may hold `=`), spaces around either ignored; undefined without `=`. */
export function splitPair(pair: string): [key: string, value: string] | undefined {
  const equals = pair.indexOf('=');
  if (equals < 0) return undefined;
  return [pair.slice(0, equals).trim(), pair.slice(equals + 1).trim()];
}

/** `team=search, feature=autocomplete` → a map; blank → no tags. */
export function parseTagList(text: string): TagListParse {
  const tags: Tags = {};
  if (text.trim() === '') return { ok: true, tags };
  for (const part of text.split(',')) {
    const pair = splitPair(part);
    if (!pair)
      return {
        ok: false,
        message: `“${part.trim()}” is not a key=value pair: separate tags with commas, e.g. team=search, feature=autocomplete.`,
      };
    const [key, value] = pair;
    if (Object.hasOwn(tags, key))
      return { ok: false, message: `Tag “${key}” is given twice: a token has one value per key.` };
    tags[key] = value;
  }
  return { ok: true, tags };
}
