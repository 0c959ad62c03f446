import { sendUntilProcessed } from './unprocessed';
import type { DocumentClient } from './wire/document-client';

type Item = Record<string, unknown>;

const MAX_ITEMS_PER_BATCH = 25;

/**
 * Puts into one table, coalesced: items written in the same tick go out as
 * BatchWriteItem calls of up to 25, so under load usage rows share store calls.
 * A lone item stays a PutItem. Puts are whole-item and keyed by the item's own
 * id, so writing the same item again leaves exactly one.
 */
export class BatchedPut {
  private queue: Array<{ item: Item; resolve(): void; reject(error: unknown): void }> = [];

  constructor(private readonly doc: DocumentClient, private readonly table: string) {}

  put(item: Item): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => void this.flush());
      this.queue.push({ item, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const waiters = this.queue;
    this.queue = [];
    const batches = [];
    for (let start = 0; start < waiters.length; start += MAX_ITEMS_PER_BATCH) batches.push(waiters.slice(start, start + MAX_ITEMS_PER_BATCH));
    await Promise.all(
      batches.map(async (batch) => {
        try {
          await this.write(batch.map((w) => w.item));
          for (const waiter of batch) waiter.resolve();
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }),
    );
  }

  private async write(items: Item[]): Promise<void> {
    if (items.length === 1) {
      await this.doc.send({ operation: 'PutItem', input: { TableName: this.table, Item: items[0] } });
      return;
    }
    await sendUntilProcessed(
      items.map((Item) => ({ PutRequest: { Item } })),
      'writes',
      async (pending) => {
        const result = await this.doc.send({ operation: 'BatchWriteItem', input: { RequestItems: { [this.table]: pending } } });
        return (result.UnprocessedItems?.[this.table] as typeof pending | undefined) ?? [];
      },
    );
  }
}
