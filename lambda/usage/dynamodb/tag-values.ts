import { OVERFLOW_VALUE, type Tags } from '../../tags/tags';
import { dayOf } from '../rollups/bucket-keys';
import type { StreamedRow } from '../rollups/fold';
import { capAnswerId, type CappedSets, type CapQuestion } from './capped-sets';
import type { DailyCaps } from './daily-caps';

const dayOfRow = (streamed: StreamedRow) => dayOf(Date.parse(streamed.row.ts));

/**
 * Which tags of a row the stats count. Tag values are the customer's: a request id sent as a tag
 * would otherwise add two rollup items per row. Per account and UTC day, the first
 * `caps.tagKeys` keys and, per key, the first `caps.tagValues` values are kept (daily-caps.ts);
 * a later value is counted under `(other)`, and a later key is left out of the stats (rows keep
 * every tag, and the log filters find them).
 *
 * What was kept is recorded in the rollups table (`TK#<day>` and `TV#<day>#<key>`, a capped set
 * each, capped-sets.ts).
 */
export async function countedTags(sets: CappedSets, rows: StreamedRow[], caps: DailyCaps): Promise<StreamedRow[]> {
  const tagged = rows.filter((streamed) => Object.keys(streamed.row.tags ?? {}).length > 0);
  if (tagged.length === 0) return rows;
  const keyQuestion = (s: StreamedRow, key: string): CapQuestion => ({
    accountId: s.row.account_id,
    set: `TK#${dayOfRow(s)}`,
    member: key,
    cap: caps.tagKeys,
  });
  const valueQuestion = (s: StreamedRow, key: string, value: string): CapQuestion => ({
    accountId: s.row.account_id,
    set: `TV#${dayOfRow(s)}#${key}`,
    member: value,
    cap: caps.tagValues,
  });
  // Each distinct question once, keys before their values: one hot set item takes its
  // conditional ADDs one after another anyway.
  const keys = await sets.answerAll(tagged.flatMap((s) => Object.keys(s.row.tags!).map((key) => keyQuestion(s, key))));
  const keptKey = (s: StreamedRow, key: string) => keys.get(capAnswerId(keyQuestion(s, key))) === true;
  const values = await sets.answerAll(
    tagged.flatMap((s) =>
      Object.entries(s.row.tags!)
        .filter(([key]) => keptKey(s, key))
        .map(([key, value]) => valueQuestion(s, key, value)),
    ),
  );
  return rows.map((streamed) => {
    const tags = streamed.row.tags;
    if (!tags || Object.keys(tags).length === 0) return streamed;
    const kept: Tags = {};
    for (const [key, value] of Object.entries(tags)) {
      if (!keptKey(streamed, key)) continue;
      kept[key] = values.get(capAnswerId(valueQuestion(streamed, key, value))) ? value : OVERFLOW_VALUE;
    }
    return { ...streamed, row: { ...streamed.row, tags: kept } };
  });
}
