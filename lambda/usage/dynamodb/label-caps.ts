import { createHash } from 'node:crypto';
import { dayOf } from '../rollups/bucket-keys';
import type { StreamedRow } from '../rollups/fold';
import { OTHER_LABEL } from '../rollups/summary';
import type { UsageRow } from '../usage-row';
import { capAnswerId, type CappedSets, type CapQuestion } from './capped-sets';

/**
 * Distinct requester labels the stats keep by name per account and UTC day; later ones count as
 * `(other)`.
 */
export const MAX_REQUESTERS_PER_DAY = 300;
/** Distinct model ids the stats keep by name per account and UTC day; later ones count as `(other)`. */
export const MAX_MODELS_PER_DAY = 200;
/**
 * Distinct rollup items (provider, model, requester, token, endpoint kind) per account and UTC day.
 * The two caps above bound each label, not their pairs: 300 requesters each calling 200 models
 * would be 60,000 items an hour. Past this many, a row counts under `(other)` for both model and
 * requester, so an hour holds at most this many items plus one per provider, token and kind.
 */
export const MAX_COMBINATIONS_PER_DAY = 1_000;

/** The row labels any caller chooses (any `x-proxy-user`, any model id), each with its daily set. */
const CAPPED_LABELS = [
  { field: 'requester', set: 'RQ', cap: MAX_REQUESTERS_PER_DAY },
  { field: 'model', set: 'MD', cap: MAX_MODELS_PER_DAY },
] as const;

const dayOfRow = (row: UsageRow) => dayOf(Date.parse(row.ts));

function labelQuestion(streamed: StreamedRow, label: (typeof CAPPED_LABELS)[number]): CapQuestion | undefined {
  const member = streamed.row[label.field] ?? '';
  // No label (no `x-proxy-user`) is one value that is always kept, and never takes a place in the set.
  if (member === '') return undefined;
  return { accountId: streamed.row.account_id, set: `${label.set}#${dayOfRow(streamed.row)}`, member, cap: label.cap };
}

/**
 * The row's rollup item as a set member: a short digest of its dimensions, so the set stays a few
 * kilobytes. The item everything past the cap folds into never takes a place.
 */
function combinationQuestion(row: UsageRow): CapQuestion | undefined {
  if (row.model === OTHER_LABEL && row.requester === OTHER_LABEL) return undefined;
  const dimensions = JSON.stringify([row.provider, row.model, row.requester ?? '', row.token_id ?? '', row.kind ?? '']);
  return {
    accountId: row.account_id,
    set: `CB#${dayOfRow(row)}`,
    member: createHash('sha256').update(dimensions).digest('base64url').slice(0, 16),
    cap: MAX_COMBINATIONS_PER_DAY,
  };
}

async function withLabelsKept(sets: CappedSets, rows: StreamedRow[]): Promise<StreamedRow[]> {
  const questions = rows.flatMap((streamed) =>
    CAPPED_LABELS.map((label) => labelQuestion(streamed, label)).filter((q) => q !== undefined),
  );
  if (questions.length === 0) return rows;
  const answers = await sets.answerAll(questions);
  return rows.map((streamed) => {
    let row = streamed.row;
    for (const label of CAPPED_LABELS) {
      const asked = labelQuestion(streamed, label);
      if (asked && !answers.get(capAnswerId(asked))) row = { ...row, [label.field]: OTHER_LABEL };
    }
    return row === streamed.row ? streamed : { ...streamed, row };
  });
}

async function withCombinationsKept(sets: CappedSets, rows: StreamedRow[]): Promise<StreamedRow[]> {
  const questions = rows.map(({ row }) => combinationQuestion(row)).filter((q) => q !== undefined);
  if (questions.length === 0) return rows;
  const answers = await sets.answerAll(questions);
  return rows.map((streamed) => {
    const asked = combinationQuestion(streamed.row);
    if (!asked || answers.get(capAnswerId(asked))) return streamed;
    return { ...streamed, row: { ...streamed.row, model: OTHER_LABEL, requester: OTHER_LABEL } };
  });
}

/**
 * The rows with the requester labels and models the stats keep by name: per account and UTC day,
 * the first `MAX_REQUESTERS_PER_DAY` requesters and `MAX_MODELS_PER_DAY` models, and of the rollup
 * items those make, the first `MAX_COMBINATIONS_PER_DAY`; past a cap the row is counted under
 * `(other)`, so the rollup items a period's summary reads stay bounded whatever values callers
 * send. Rows keep their labels (the logs and budgets see them); only what the rollups count
 * changes. Kept in capped sets (`RQ#<day>`, `MD#<day>`, `CB#<day>`) as tag values are; the
 * combinations are asked about once the labels are settled, so a row delivered again gets the
 * same answers.
 */
export async function countedLabels(sets: CappedSets, rows: StreamedRow[]): Promise<StreamedRow[]> {
  return withCombinationsKept(sets, await withLabelsKept(sets, rows));
}
