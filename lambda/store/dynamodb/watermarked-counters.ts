import type { DocumentClient } from './document-client';
import { conditionFailedItem } from './store-errors';

/** Rounds of "someone else moved the watermark first" before a write is given up (and its rows redelivered). */
const MAX_WATERMARK_ROUNDS = 5;

/** Stream sequence numbers are decimal strings of 21 to 40 digits; padded to 40 they compare as strings as numbers do. */
export const SEQUENCE_WIDTH = 40;

export function sortableSequence(sequence: string): string {
  return sequence.padStart(SEQUENCE_WIDTH, '0');
}

/** The sequence a stored watermark names: its first 40 characters (what follows is the writer's stamp, if any). */
export const watermarkSequence = (stored: string) => stored.slice(0, SEQUENCE_WIDTH);

/** A row of a stream shard: its position in the shard. */
export interface Sequenced {
  sequence: string;
}

export interface WatermarkedAddition<T extends Sequenced> {
  table: string;
  key: Record<string, string>;
  /** The attribute holding the shard's watermark on the item. */
  watermark: string;
  /** The rows folded into this item, in stream order. */
  rows: readonly T[];
  /** What some of the rows (those not counted yet) add to the item's counters. */
  increments: (rows: readonly T[]) => Record<string, number>;
  /** Attributes set beside the counters (the same value whoever writes them). */
  set?: Record<string, string | number>;
  /** Follows the sequence in the stored watermark; never changes how watermarks compare (they are 40 digits). */
  stamp?: string;
  /** Answer with the item as written (returned values cost no write units). */
  returnItem?: boolean;
  /** Told which rows this call counted (none that a redelivery had counted before). */
  onCounted?: (rows: readonly T[]) => void;
}

/**
 * One conditional ADD per item and batch of a stream shard, counting each row exactly once.
 *
 * The item keeps, per shard, the sequence number of the last row it counted (its watermark). The
 * ADD is conditioned on that watermark being below the first row the batch carries, and moves it
 * to the last. A shard delivers its rows in order, so a row at or below the watermark is already
 * counted: when the condition fails, the item's old image (returned with the failure) names the
 * watermark, and only the rows after it are added, conditioned on the watermark being exactly
 * that. A redelivered, split or overlapping batch, or a second consumer, thus never counts a row
 * twice, and a lost answer can be resent safely. What this needs of a consumer is what Lambda does
 * per shard: batches in order, one at a time, and no moving past a batch whose rows were reported
 * as failed until they are counted.
 */
export class WatermarkedCounters {
  constructor(private readonly doc: DocumentClient) {}

  /** Resolves with the item as written when asked (undefined when every row was already counted). */
  async add<T extends Sequenced>(addition: WatermarkedAddition<T>): Promise<Record<string, unknown> | undefined> {
    const { rows, watermark } = addition;
    let pending: readonly T[] = rows;
    let stored: string | undefined;
    for (let round = 0; round < MAX_WATERMARK_ROUNDS; round++) {
      if (pending.length === 0) return undefined;
      const names: Record<string, string> = { '#w': watermark };
      const values: Record<string, unknown> = {
        ':last': sortableSequence(pending[pending.length - 1].sequence) + (addition.stamp ?? ''),
        ':guard': stored ?? sortableSequence(pending[0].sequence),
      };
      const additions = Object.entries(addition.increments(pending)).map(([attribute, amount], i) => {
        names[`#a${i}`] = attribute;
        values[`:a${i}`] = amount;
        return `#a${i} :a${i}`;
      });
      const assignments = Object.entries(addition.set ?? {}).map(([attribute, value], i) => {
        names[`#s${i}`] = attribute;
        values[`:s${i}`] = value;
        return `, #s${i} = :s${i}`;
      });
      try {
        const written = await this.doc.send({
          operation: 'UpdateItem',
          input: {
            TableName: addition.table,
            Key: addition.key,
            UpdateExpression: `ADD ${additions.join(', ')} SET #w = :last${assignments.join('')}`,
            // First try: nothing of this shard at or after the batch's first row is counted yet.
            // Later tries: the watermark is still the one just read, so the rows after it are new.
            ConditionExpression: stored === undefined ? 'attribute_not_exists(#w) OR #w < :guard' : '#w = :guard',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: addition.returnItem ? 'ALL_NEW' : 'NONE',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        });
        addition.onCounted?.(pending);
        return written.Attributes;
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        const current = conditionFailedItem(error)?.[watermark];
        if (typeof current !== 'string') throw new Error(`${watermark}: condition failed without a watermark`);
        stored = current;
        const counted = watermarkSequence(current);
        pending = rows.filter((row) => sortableSequence(row.sequence) > counted);
      }
    }
    if (pending.length > 0) throw new Error(`${watermark}: the watermark kept moving under concurrent consumers`);
    return undefined;
  }
}
