import { sentOnce } from './commands';
import { sendUntilProcessed } from './unprocessed';
import type { DocumentClient } from './document-client';

type Key = Record<string, string>;
type Item = Record<string, unknown>;

interface Waiter {
  key: Key;
  id: string;
  resolve(item: Item | undefined): void;
  reject(error: unknown): void;
}

const MAX_KEYS_PER_BATCH = 100;

/**
 * Strongly consistent point reads of one table, coalesced: every read asked
 * for in the same tick goes out as one BatchGetItem. A proxy request's budget
 * items (same table, all known from the token) thus cost one store call, and
 * concurrent requests share calls too. A lone read stays a GetItem.
 */
export class BatchedGet {
  private queue: Waiter[] = [];

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly keyNames: readonly string[],
  ) {}

  get(key: Key): Promise<Item | undefined> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) queueMicrotask(() => void this.flush());
      this.queue.push({ key, id: this.idOf(key), resolve, reject });
    });
  }

  private idOf(item: Item): string {
    return this.keyNames.map((name) => String(item[name])).join('\u0000');
  }

  private async flush(): Promise<void> {
    const waiters = this.queue;
    this.queue = [];
    for (let start = 0; start < waiters.length; start += MAX_KEYS_PER_BATCH) {
      const slice = waiters.slice(start, start + MAX_KEYS_PER_BATCH);
      try {
        const found = await this.read([...new Map(slice.map((w) => [w.id, w.key])).values()]);
        for (const waiter of slice) waiter.resolve(found.get(waiter.id));
      } catch (error) {
        for (const waiter of slice) waiter.reject(error);
      }
    }
  }

  private async read(keys: Key[]): Promise<Map<string, Item>> {
    const found = new Map<string, Item>();
    if (keys.length === 1) {
      const { Item } = await this.doc.send({
        operation: 'GetItem',
        input: { TableName: this.table, Key: keys[0], ConsistentRead: true },
      });
      if (Item) found.set(this.idOf(Item), Item);
      return found;
    }
    await sendUntilProcessed(keys, 'reads', async (pending) => {
      const result = await this.doc.send(
        sentOnce({
          operation: 'BatchGetItem',
          input: { RequestItems: { [this.table]: { Keys: pending, ConsistentRead: true } } },
        }),
      );
      for (const item of result.Responses?.[this.table] ?? []) found.set(this.idOf(item), item);
      return (result.UnprocessedKeys?.[this.table]?.Keys as Key[] | undefined) ?? [];
    });
    return found;
  }
}
