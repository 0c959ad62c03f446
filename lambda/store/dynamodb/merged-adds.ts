import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { sentAtMostOnce, type DocumentClient } from './wire/document-client';

type Key = Record<string, string>;

interface PendingItem {
  key: Key;
  increments: Record<string, number>;
  /** Attributes set (not added) with the increments, such as an expiry: the same value whoever writes it. */
  set: Record<string, number | string>;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

/**
 * Counters changed only by atomic ADDs, merged per item: increments arriving
 * while an earlier write of the same item is in flight go out together in the
 * next one, so a hot counter costs one write per flush instead of one per
 * addition. Every write is sent at most once: after a lost answer it may have
 * been applied, and a resend would count all of its merged increments twice.
 */
export class MergedAdds {
  private readonly pending = new Map<string, PendingItem>();
  private readonly writing = new Set<string>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  /** Resolves once these increments are stored; rejects if the write carrying them failed. */
  add(key: Key, increments: Record<string, number>, set: Record<string, number | string> = {}): Promise<void> {
    const id = Object.entries(key)
      .map(([name, value]) => `${name}=${value}`)
      .join('\u0000');
    let entry = this.pending.get(id);
    if (!entry) {
      entry = { key, increments: {}, set: {}, waiters: [] };
      this.pending.set(id, entry);
      if (!this.writing.has(id)) setImmediate(() => void this.write(id));
    }
    for (const [attribute, amount] of Object.entries(increments)) entry.increments[attribute] = (entry.increments[attribute] ?? 0) + amount;
    Object.assign(entry.set, set);
    const waiting = entry;
    return new Promise((resolve, reject) => waiting.waiters.push({ resolve, reject }));
  }

  private async write(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    this.writing.add(id);
    const names: Record<string, string> = {};
    const values: Record<string, number | string> = {};
    const additions = Object.entries(entry.increments).map(([attribute, amount], i) => {
      names[`#a${i}`] = attribute;
      values[`:a${i}`] = amount;
      return `#a${i} :a${i}`;
    });
    const assignments = Object.entries(entry.set).map(([attribute, value], i) => {
      names[`#s${i}`] = attribute;
      values[`:s${i}`] = value;
      return `#s${i} = :s${i}`;
    });
    try {
      await this.doc.send(
        sentAtMostOnce(
          new UpdateCommand({
            TableName: this.table,
            Key: entry.key,
            UpdateExpression: `ADD ${additions.join(', ')}${assignments.length ? ` SET ${assignments.join(', ')}` : ''}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      for (const waiter of entry.waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of entry.waiters) waiter.reject(error);
    } finally {
      this.writing.delete(id);
      // Increments that arrived during this write go out now, merged.
      if (this.pending.has(id)) void this.write(id);
    }
  }
}
