import { eachInFlight } from '../../in-flight';
import { OVERFLOW_VALUE, type Tags } from '../../tags/tags';
import { dayOf } from '../rollups/bucket-keys';
import type { StreamedRow } from '../rollups/fold';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

/** Distinct tag keys the stats keep per account and UTC day (docs/tags.md, "Stats"). */
export const MAX_TAG_KEYS_PER_DAY = 50;
/** Distinct values the stats keep per tag key, account and UTC day; the rest count as `(other)`. */
export const MAX_TAG_VALUES_PER_DAY = 100;

const MEMO_MAX = 50_000;
/** Sets asked about at once per batch (one set's questions go one at a time). */
const IN_FLIGHT = 4;

const questionId = (accountId: string, set: string, member: string) => `${accountId}\u0000${set}\u0000${member}`;

/**
 * Which tags of a row the stats count. Tag values are the customer's: a request id sent as a tag
 * would otherwise add two rollup items per row. Per account and UTC day, the first
 * `MAX_TAG_KEYS_PER_DAY` keys and, per key, the first `MAX_TAG_VALUES_PER_DAY` values are kept;
 * a later value is counted under `(other)`, and a later key is left out of the stats (rows keep
 * every tag, and the log filters find them).
 *
 * What was kept is recorded in the rollups table (`TK#<day>` and `TV#<day>#<key>`, a string set
 * each), grown by a conditional ADD that admits a member only while the set is below its cap. A
 * member once admitted stays, and a full set stays full for the day, so a row delivered again
 * gets the same answer: the fold stays idempotent. Answers are remembered by the instance.
 */
export class TagValueCaps {
  private readonly known = new Map<string, boolean>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  /** The rows with the tags the stats count (a row without tags is returned as it is). */
  async apply(rows: StreamedRow[]): Promise<StreamedRow[]> {
    const tagged = rows.filter((streamed) => Object.keys(streamed.row.tags ?? {}).length > 0);
    if (tagged.length === 0) return rows;
    // Each distinct question once, keys before their values: one hot set item takes its
    // conditional ADDs one after another anyway.
    const ask = (list: [string, string, string, number][]) => this.answerAll(list);
    const dayOf_ = (streamed: StreamedRow) => dayOf(Date.parse(streamed.row.ts));
    const keys = await ask(
      tagged.flatMap((s) =>
        Object.keys(s.row.tags!).map((key): [string, string, string, number] => [
          s.row.account_id,
          `TK#${dayOf_(s)}`,
          key,
          MAX_TAG_KEYS_PER_DAY,
        ]),
      ),
    );
    const values = await ask(
      tagged.flatMap((s) =>
        Object.entries(s.row.tags!)
          .filter(([key]) => keys.get(questionId(s.row.account_id, `TK#${dayOf_(s)}`, key)))
          .map(([key, value]): [string, string, string, number] => [
            s.row.account_id,
            `TV#${dayOf_(s)}#${key}`,
            value,
            MAX_TAG_VALUES_PER_DAY,
          ]),
      ),
    );
    return rows.map((streamed) => {
      const tags = streamed.row.tags;
      if (!tags || Object.keys(tags).length === 0) return streamed;
      const { account_id: accountId } = streamed.row;
      const day = dayOf_(streamed);
      const kept: Tags = {};
      for (const [key, value] of Object.entries(tags)) {
        if (!keys.get(questionId(accountId, `TK#${day}`, key))) continue;
        kept[key] = values.get(questionId(accountId, `TV#${day}#${key}`, value)) ? value : OVERFLOW_VALUE;
      }
      return { ...streamed, row: { ...streamed.row, tags: kept } };
    });
  }

  /**
   * The answers to distinct questions. Those about one set are asked one after another in the
   * order given, so a set admits the first values the rows name, whatever the timing: the fold
   * and a rebuild from the table (local/rollup-rebuild.ts), given the same rows in the same order,
   * keep the same ones. A few sets are asked about at once.
   */
  private async answerAll(questions: [string, string, string, number][]): Promise<Map<string, boolean>> {
    const bySet = new Map<string, Array<[string, [string, string, string, number]]>>();
    const asked = new Set<string>();
    for (const question of questions) {
      const id = questionId(question[0], question[1], question[2]);
      if (asked.has(id)) continue;
      asked.add(id);
      const setId = questionId(question[0], question[1], '');
      const members = bySet.get(setId) ?? [];
      if (!bySet.has(setId)) bySet.set(setId, members);
      members.push([id, question]);
    }
    const answers = new Map<string, boolean>();
    await eachInFlight([...bySet.values()], IN_FLIGHT, async (set) => {
      for (const [id, [accountId, setName, member, cap]] of set)
        answers.set(id, await this.admitted(accountId, setName, member, cap));
    });
    return answers;
  }

  private async admitted(accountId: string, set: string, member: string, cap: number): Promise<boolean> {
    const id = questionId(accountId, set, member);
    const full = questionId(accountId, set, '');
    const memo = this.known.get(id) ?? (this.known.has(full) ? false : undefined);
    if (memo !== undefined) return memo;
    let admitted = true;
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: { account_id: accountId, bucket: set },
          UpdateExpression: 'ADD members :member',
          ConditionExpression: 'attribute_not_exists(members) OR contains(members, :value) OR size(members) < :cap',
          ExpressionAttributeValues: { ':member': new Set([member]), ':value': member, ':cap': cap },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      admitted = false;
      const members = conditionFailedItem(error)?.members;
      if (this.known.size >= MEMO_MAX) this.known.clear();
      // A full set never changes again that day: with its members known, any other member is answered without a call.
      if (members instanceof Set)
        for (const existing of members) this.known.set(questionId(accountId, set, String(existing)), true);
      this.known.set(full, false);
    }
    if (this.known.size >= MEMO_MAX) this.known.clear();
    if (admitted) this.known.set(id, true);
    return admitted;
  }
}
