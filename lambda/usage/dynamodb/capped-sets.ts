import { eachInFlight } from '../../base/in-flight';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

/** Is `member` one of the at most `cap` members set `set` of the account keeps? */
export interface CapQuestion {
  accountId: string;
  set: string;
  member: string;
  cap: number;
}

const MEMO_MAX = 50_000;
/** Sets asked about at once per batch (one set's questions go one at a time). */
const IN_FLIGHT = 4;

const questionId = (accountId: string, set: string, member: string) => `${accountId}\u0000${set}\u0000${member}`;

/** The id under which `CappedSets.answerAll` answers a question. */
export const capAnswerId = (question: Omit<CapQuestion, 'cap'>) =>
  questionId(question.accountId, question.set, question.member);

/**
 * Sets of values the stats keep by name, each capped, in the rollups table (one string set item
 * per account and set name): a value the caller chooses (a tag value, a requester label, a model
 * id) would otherwise add rollup items without end. A conditional ADD admits a member only while
 * the set is below its cap. A member once admitted stays, and a full set stays full, so a row
 * delivered again gets the same answer: the fold stays idempotent. Answers are remembered by the
 * instance.
 */
export class CappedSets {
  private readonly known = new Map<string, boolean>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  /**
   * The answers to distinct questions, by `capAnswerId`. Those about one set are asked one after
   * another in the order given, so a set admits the first values the rows name, whatever the
   * timing: the fold and a rebuild from the table (local/rollup-rebuild.ts), given the same rows
   * in the same order, keep the same ones. A few sets are asked about at once.
   */
  async answerAll(questions: readonly CapQuestion[]): Promise<Map<string, boolean>> {
    const bySet = new Map<string, CapQuestion[]>();
    const asked = new Set<string>();
    for (const question of questions) {
      const id = capAnswerId(question);
      if (asked.has(id)) continue;
      asked.add(id);
      const setId = questionId(question.accountId, question.set, '');
      const members = bySet.get(setId) ?? [];
      if (!bySet.has(setId)) bySet.set(setId, members);
      members.push(question);
    }
    const answers = new Map<string, boolean>();
    await eachInFlight([...bySet.values()], IN_FLIGHT, async (set) => {
      for (const question of set) answers.set(capAnswerId(question), await this.admitted(question));
    });
    return answers;
  }

  private async admitted({ accountId, set, member, cap }: CapQuestion): Promise<boolean> {
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
      // A full set never changes again: with its members known, any other member is answered without a call.
      if (members instanceof Set)
        for (const existing of members) this.known.set(questionId(accountId, set, String(existing)), true);
      this.known.set(full, false);
    }
    if (this.known.size >= MEMO_MAX) this.known.clear();
    if (admitted) this.known.set(id, true);
    return admitted;
  }
}
