import type { Page } from '../../store/dynamodb/paginate';

type Item = Record<string, unknown>;

interface Shard {
  pages: AsyncGenerator<Page<Item>, void, undefined>;
  /** Fetched items not handed out yet, newest first. */
  buffer: Item[];
  /** The sort key the shard has been read down to; undefined once it is read to its end. */
  position?: string;
  done: boolean;
  pagesRead: number;
}

export interface Merged {
  items: Item[];
  /** Where the next page starts (a sort key), when there may be more. */
  resumeAt?: string;
}

const sortKey = (item: Item) => item.ts_id as string;

/**
 * The newest `limit` items of several shards (each read newest first), in one time order, like one
 * partition's. A shard is read a page at a time, only when its next item is needed, and at most
 * `maxPages` pages each. When a shard runs out of pages before the page is full, the merge stops at
 * the position that shard had reached: every item above it has been handed out (from every shard),
 * and a read resuming there misses nothing.
 */
export async function mergeShards(
  readers: Array<AsyncGenerator<Page<Item>, void, undefined>>,
  limit: number,
  maxPages: number,
  startAt?: string,
): Promise<Merged> {
  const shards: Shard[] = readers.map((pages) => ({ pages, buffer: [], position: startAt, done: false, pagesRead: 0 }));
  const items: Item[] = [];
  while (items.length < limit) {
    await Promise.all(shards.filter((s) => s.buffer.length === 0 && !s.done && s.pagesRead < maxPages).map(refill));
    const stalled = shards.filter((s) => s.buffer.length === 0 && !s.done);
    const floor = stalled
      .map((s) => s.position ?? '')
      .sort()
      .pop();
    let best: Shard | undefined;
    for (const shard of shards)
      if (shard.buffer.length > 0 && (!best || sortKey(shard.buffer[0]) > sortKey(best.buffer[0]))) best = shard;
    if (!best || (floor !== undefined && sortKey(best.buffer[0]) <= floor)) return { items, resumeAt: floor };
    items.push(best.buffer.shift()!);
  }
  const more = shards.some((s) => s.buffer.length > 0 || !s.done);
  return { items, resumeAt: more ? sortKey(items[items.length - 1]) : undefined };
}

async function refill(shard: Shard): Promise<void> {
  const next = await shard.pages.next();
  shard.pagesRead++;
  if (next.done) {
    shard.done = true;
    return;
  }
  shard.buffer.push(...next.value.items);
  shard.position = next.value.lastKey?.ts_id as string | undefined;
  if (!next.value.lastKey) shard.done = true;
}
