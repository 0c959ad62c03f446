import { createHash } from 'node:crypto';
import { dayOf } from '../rollups/bucket-keys';
import type { StreamedRow } from '../rollups/fold';
import { OTHER_LABEL } from '../rollups/summary';
import type { UsageRow } from '../usage-row';
import { capAnswerId, type CappedSets, type CapQuestion } from './capped-sets';
import type { DailyCaps } from './daily-caps';

/** The row labels any caller chooses (any `x-proxy-user`, any model id), each with its daily set. */
const CAPPED_LABELS = [
  { field: 'requester', set: 'RQ', cap: 'requesters' },
  { field: 'model', set: 'MD', cap: 'models' },
] as const;

const dayOfRow = (row: UsageRow) => dayOf(Date.parse(row.ts));

function labelQuestion(
  streamed: StreamedRow,
  label: (typeof CAPPED_LABELS)[number],
  caps: DailyCaps,
): CapQuestion | undefined {
  const member = streamed.row[label.field] ?? '';
  // No label (no `x-proxy-user`) is one value that is always kept, and never takes a place in the set.
  if (member === '') return undefined;
  return {
    accountId: streamed.row.account_id,
    set: `${label.set}#${dayOfRow(streamed.row)}`,
    member,
    cap: caps[label.cap],
  };
}

/**
 * The row's rollup item as a set member: a short digest of its dimensions, so the set stays a few
 * kilobytes. The item everything past the cap folds into never takes a place.
 */
function combinationQuestion(row: UsageRow, caps: DailyCaps): CapQuestion | undefined {
  if (row.model === OTHER_LABEL && row.requester === OTHER_LABEL) return undefined;
  const dimensions = JSON.stringify([row.provider, row.model, row.requester ?? '', row.token_id ?? '', row.kind ?? '']);
  return {
    accountId: row.account_id,
    set: `CB#${dayOfRow(row)}`,
    member: createHash('sha256').update(dimensions).digest('base64url').slice(0, 16),
    cap: caps.combinations,
  };
}

async function withLabelsKept(sets: CappedSets, rows: StreamedRow[], caps: DailyCaps): Promise<StreamedRow[]> {
  const questions = rows.flatMap((streamed) =>
    CAPPED_LABELS.map((label) => labelQuestion(streamed, label, caps)).filter((q) => q !== undefined),
  );
  if (questions.length === 0) return rows;
  const answers = await sets.answerAll(questions);
  return rows.map((streamed) => {
    let row = streamed.row;
    for (const label of CAPPED_LABELS) {
      const asked = labelQuestion(streamed, label, caps);
      if (asked && !answers.get(capAnswerId(asked))) row = { ...row, [label.field]: OTHER_LABEL };
    }
    return row === streamed.row ? streamed : { ...streamed, row };
  });
}

async function withCombinationsKept(sets: CappedSets, rows: StreamedRow[], caps: DailyCaps): Promise<StreamedRow[]> {
  const questions = rows.map(({ row }) => combinationQuestion(row, caps)).filter((q) => q !== undefined);
  if (questions.length === 0) return rows;
  const answers = await sets.answerAll(questions);
  return rows.map((streamed) => {
    const asked = combinationQuestion(streamed.row, caps);
    if (!asked || answers.get(capAnswerId(asked))) return streamed;
    return { ...streamed, row: { ...streamed.row, model: OTHER_LABEL, requester: OTHER_LABEL } };
  });
}

/**
 * The rows with the requester labels and models the stats keep by name: per account and UTC day,
 * the first `caps.requesters` requesters and `caps.models` models, and of the rollup items those
 * make, the first `caps.combinations` (daily-caps.ts); past a cap the row is counted under
 * `(other)`, so the rollup items a period's summary reads stay bounded whatever values callers
 * send. Rows keep their labels (the logs and budgets see them); only what the rollups count
 * changes. Kept in capped sets (`RQ#<day>`, `MD#<day>`, `CB#<day>`) as tag values are; the
 * combinations are asked about once the labels are settled, so a row delivered again gets the
 * same answers.
 */
export async function countedLabels(sets: CappedSets, rows: StreamedRow[], caps: DailyCaps): Promise<StreamedRow[]> {
  return withCombinationsKept(sets, await withLabelsKept(sets, rows, caps), caps);
}
