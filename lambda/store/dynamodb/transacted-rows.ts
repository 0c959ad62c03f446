import { idempotencyToken } from './idempotency-token';
import { counterUpdate, mergeCounterChanges, type CounterChange } from './counter-change';
import type { DocumentClient } from './document-client';
import { sentOnce, type CommandOf } from './commands';
import { cancellationReasons } from './store-errors';

type Item = Record<string, unknown>;

export interface RowWithChanges {
  /** The row as stored, its key included. */
  item: Item;
  /** The row's unique id: what makes its write idempotent. */
  id: string;
  /** Counters (in the changes' table) the row adds to. */
  changes: CounterChange[];
}

interface Waiter extends RowWithChanges {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Rows are few per transaction, so the transaction stays below DynamoDB's 4 MB even with 8 KB
 * labels; and a transaction takes rows only while their puts and counters fit in its 100
 * actions (a row with 20 tags adds to 44 counters, so at least two such rows fit).
 */
const MAX_ROWS_PER_TRANSACTION = 10;
const MAX_ACTIONS_PER_TRANSACTION = 100;

/**
 * Writes rows together with the counters they add to, in one TransactWriteItems:
 * every row's `Put` is guarded by `attribute_not_exists`, so the transaction
 * applies each row and its additions exactly once.
 *
 * - A transaction sent again after a lost answer or a cut connection carries
 *   the same `ClientRequestToken` (derived from its rows' ids), so within
 *   DynamoDB's 10-minute window it is not applied twice; after it, the guard
 *   cancels it instead.
 * - A cancellation whose only failed conditions are rows' guards means those
 *   rows, and their additions, are already stored: they are done, and the
 *   others are sent again without them.
 *
 * Each write is one attempt: the transaction is sent once (`sentOnce`), and again only without
 * rows found already stored. The caller retries a refusal under its own policy (the row writer's),
 * so the client's retries never multiply it.
 *
 * One transaction is in flight at a time; rows arriving meanwhile are merged
 * into the next one, their additions to the same counter summed. That keeps
 * transactions of one process from conflicting with each other on a hot
 * counter (a token's spend), where one transaction per row would.
 */
export class TransactedRows {
  private queue: Waiter[] = [];
  private writing = false;

  constructor(
    private readonly doc: DocumentClient,
    private readonly rowTable: string,
    private readonly rowKey: string,
    private readonly counterTable: string,
  ) {}

  /** Resolves once the row and its additions are stored (now or before); rejects if the store refused them. */
  write(row: RowWithChanges): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...row, resolve, reject });
      if (!this.writing) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    if (this.writing || this.queue.length === 0) return;
    this.writing = true;
    const batch = this.takeBatch();
    try {
      await this.commit(batch);
      for (const waiter of batch) waiter.resolve();
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
    } finally {
      this.writing = false;
      if (this.queue.length > 0) void this.flush();
    }
  }

  /** Up to the limits, each row id once: a transaction may name an item only once. */
  private takeBatch(): Waiter[] {
    const batch: Waiter[] = [];
    const ids = new Set<string>();
    const rest: Waiter[] = [];
    // Counted before merging: rows sharing a counter would fit more, never fewer.
    let actions = 0;
    for (const waiter of this.queue) {
      const cost = 1 + waiter.changes.length;
      if (
        batch.length < MAX_ROWS_PER_TRANSACTION &&
        !ids.has(waiter.id) &&
        (batch.length === 0 || actions + cost <= MAX_ACTIONS_PER_TRANSACTION)
      ) {
        ids.add(waiter.id);
        batch.push(waiter);
        actions += cost;
      } else rest.push(waiter);
    }
    this.queue = rest;
    return batch;
  }

  private async commit(rows: RowWithChanges[]): Promise<void> {
    let pending = rows;
    while (pending.length > 0) {
      try {
        await this.doc.send(sentOnce(this.transaction(pending)));
        return;
      } catch (error) {
        const stored = storedRows(error, pending.length);
        if (!stored) throw error;
        const sent = sortedById(pending);
        pending = sent.filter((_, index) => !stored.has(index));
      }
    }
  }

  private transaction(unordered: RowWithChanges[]): CommandOf<'TransactWriteItems'> {
    // In id order: the same rows sent again make the same request, as the token requires.
    const rows = sortedById(unordered);
    const puts = rows.map((row) => ({
      Put: {
        TableName: this.rowTable,
        Item: row.item,
        ConditionExpression: 'attribute_not_exists(#key)',
        ExpressionAttributeNames: { '#key': this.rowKey },
      },
    }));
    const updates = mergeCounterChanges(rows.flatMap((row) => row.changes)).map((change) => ({
      Update: counterUpdate(this.counterTable, change),
    }));
    return {
      operation: 'TransactWriteItems',
      input: { TransactItems: [...puts, ...updates], ClientRequestToken: requestToken(rows) },
    };
  }
}

const sortedById = (rows: RowWithChanges[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** At most 36 characters; the same rows give the same token, whatever their order. */
function requestToken(rows: RowWithChanges[]): string {
  return idempotencyToken(
    sortedById(rows)
      .map((row) => row.id)
      .join('\n'),
  );
}

/**
 * The rows (by position) whose guard failed, when nothing else stopped the
 * transaction; undefined when it was cancelled for another reason too. The
 * rows come first in the transaction, in id order.
 */
function storedRows(error: unknown, rowCount: number): Set<number> | undefined {
  const reasons = cancellationReasons(error);
  if (!reasons) return undefined;
  const stored = new Set<number>();
  for (const [index, reason] of reasons.entries()) {
    if (reason === 'None') continue;
    if (reason !== 'ConditionalCheckFailed' || index >= rowCount) return undefined;
    stored.add(index);
  }
  return stored.size > 0 ? stored : undefined;
}
