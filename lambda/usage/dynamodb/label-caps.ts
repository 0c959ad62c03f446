import { dayOf } from '../rollups/bucket-keys';
import type { StreamedRow } from '../rollups/fold';
import { OTHER_LABEL } from '../rollups/summary';
import { capAnswerId, type CappedSets, type CapQuestion } from './capped-sets';

/**
 * Distinct requester labels the stats keep by name per account and UTC day; later ones count as
 * `(other)`. With the models' cap, an hour's rollup items stay a few hundred (10,000 distinct labels
 * in an hour: 501 items read), three times the 100 a summary lists by name.
 */
export const MAX_REQUESTERS_PER_DAY = 300;
/** Distinct model ids the stats keep by name per account and UTC day; later ones count as `(other)`. */
export const MAX_MODELS_PER_DAY = 200;

/** The row labels any caller chooses (any `x-proxy-user`, any model id), each with its daily set. */
const CAPPED_LABELS = [
  { field: 'requester', set: 'RQ', cap: MAX_REQUESTERS_PER_DAY },
  { field: 'model', set: 'MD', cap: MAX_MODELS_PER_DAY },
] as const;

function question(streamed: StreamedRow, label: (typeof CAPPED_LABELS)[number]): CapQuestion | undefined {
  const member = streamed.row[label.field] ?? '';
  // No label (no `x-proxy-user`) is one value that is always kept, and never takes a place in the set.
  if (member === '') return undefined;
  return {
    accountId: streamed.row.account_id,
    set: `${label.set}#${dayOf(Date.parse(streamed.row.ts))}`,
    member,
    cap: label.cap,
  };
}

/**
 * The rows with the requester labels and models the stats keep by name: per account and UTC day,
 * the first `MAX_REQUESTERS_PER_DAY` requesters and `MAX_MODELS_PER_DAY` models; a later one is
 * counted under `(other)`, so the rollup items a period's summary reads stay bounded whatever
 * values callers send. Rows keep their labels (the logs and budgets see them); only what the
 * rollups count changes. Kept in capped sets (`RQ#<day>`, `MD#<day>`) as tag values are.
 */
export async function countedLabels(sets: CappedSets, rows: StreamedRow[]): Promise<StreamedRow[]> {
  const questions = rows.flatMap((streamed) =>
    CAPPED_LABELS.map((label) => question(streamed, label)).filter((q) => q !== undefined),
  );
  if (questions.length === 0) return rows;
  const answers = await sets.answerAll(questions);
  return rows.map((streamed) => {
    let row = streamed.row;
    for (const label of CAPPED_LABELS) {
      const asked = question(streamed, label);
      if (asked && !answers.get(capAnswerId(asked))) row = { ...row, [label.field]: OTHER_LABEL };
    }
    return row === streamed.row ? streamed : { ...streamed, row };
  });
}
