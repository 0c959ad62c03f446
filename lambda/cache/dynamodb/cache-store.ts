import { createHash, randomInt } from 'node:crypto';
import {
  CacheWriteError,
  isCacheableStatus,
  type CachedResponse,
  type CachedResponseMeta,
  type CacheWriter,
  type ResponseCache,
} from '../response-cache';
import { headItem, parseHead, type EntryHead } from './cache-entry-head';
import { PartBuffer } from './cache-part-buffer';
import { pages, type Page } from '../../store/dynamodb/paginate';
import { sendUntilProcessed, UnprocessedError } from '../../store/dynamodb/unprocessed';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { sentOnce } from '../../store/dynamodb/commands';

/*
 * Layout of one entry in the cache table (partition `cache_key`, sort key `part`):
 *
 *   part 0                    the head: metadata, generation, part count, byte count, SHA-256 of the body,
 *                             and the body itself when it fits in one item (`parts` = 0)
 *   part gen * SLOTS + i      body part i (1-based) of generation `gen`, each at most `partBytes`
 *
 * Every write uses a fresh random generation, so the parts of two writers (or of
 * a writer and the entry it replaces) never share a sort key. Parts go first and
 * the head last: until the head names a generation, nobody reads its parts. A
 * reader keeps only the parts of the head's generation and checks count, length
 * and hash, so a half-written, half-deleted or tampered entry reads as a miss.
 */
/** Sort keys reserved per generation; `gen * SLOTS + index` stays a safe integer for every `gen < MAX_GENERATION`. */
const SLOTS = 2 ** 16;
const MAX_GENERATION = 2 ** 37;
/** Well under DynamoDB's 400 KB item limit, leaving room for the head's metadata. */
export const DEFAULT_PART_BYTES = 300 * 1024;
const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
const DEFAULT_WRITE_CONCURRENCY = 4;
const BATCH_LIMIT = 25;

export interface DynamoResponseCacheOptions {
  /** Bytes of body per item. */
  partBytes?: number;
  /** Larger responses are not stored (memory and write cost stay bounded). */
  maxBodyBytes?: number;
  /** Part writes in flight at once per writer. */
  writeConcurrency?: number;
}

type Item = Record<string, unknown>;

function sortKeyOf(key: Item | undefined): number | undefined {
  return typeof key?.part === 'number' ? key.part : undefined;
}

export class DynamoResponseCache implements ResponseCache {
  private readonly table: CacheTable;
  private readonly limits: Required<DynamoResponseCacheOptions>;

  constructor(doc: DocumentClient, tableName: string, options: DynamoResponseCacheOptions = {}) {
    this.table = new CacheTable(doc, tableName);
    this.limits = {
      partBytes: options.partBytes ?? DEFAULT_PART_BYTES,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      writeConcurrency: Math.max(1, options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY),
    };
  }

  /**
   * One consistent Query on the partition returns the head and, for entries up to
   * about 1 MB, every part; larger entries page on within the head's generation.
   * Consistent, so a retry right after a stored response hits.
   */
  async get(key: string, now: number): Promise<CachedResponse | undefined> {
    const answer = await this.table.query(key);
    const first: Page = { items: answer.Items ?? [], lastKey: answer.LastEvaluatedKey };
    const head = parseHead(first.items[0]);
    if (!head || head.expiresAt * 1000 <= now) return undefined;
    const body = head.parts === 0 ? (head.inline ?? new Uint8Array(0)) : await this.readParts(key, head, first);
    if (!body || body.length !== head.bytes || sha256Hex(body) !== head.sha256) return undefined;
    return { ...head.meta, body: Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8') };
  }

  open(key: string, ttlSeconds: number, now: number): CacheWriter {
    if (!(ttlSeconds > 0)) return NOTHING_STORED;
    // Rounded up: an entry lives at least its TTL, never a second less.
    return new DynamoCacheWriter(this.table, this.limits, key, Math.ceil(now / 1000) + Math.floor(ttlSeconds));
  }

  /** Settles when every background write and clean-up started so far has finished (tests, shutdown). */
  idle(): Promise<void> {
    return this.table.idle();
  }

  /** Collects the head generation's parts from the first page, then pages through that generation's range only. */
  private async readParts(key: string, head: EntryHead, first: Page): Promise<Buffer | undefined> {
    if (head.parts >= SLOTS || head.gen >= MAX_GENERATION) return undefined;
    const from = head.gen * SLOTS + 1;
    const to = head.gen * SLOTS + head.parts;
    const found = new Array<Uint8Array | undefined>(head.parts);
    let missing = head.parts;
    const collect = (items: Item[]) => {
      for (const { part, gen, data } of items) {
        if (typeof part !== 'number' || part < from || part > to || gen !== head.gen || !(data instanceof Uint8Array))
          continue;
        if (!found[part - from]) missing--;
        found[part - from] = data;
      }
    };
    collect(first.items);
    const lastPart = sortKeyOf(first.lastKey);
    if (missing > 0 && lastPart !== undefined && lastPart < to) {
      const startAfter = lastPart >= from ? { cache_key: key, part: lastPart } : undefined;
      for await (const page of pages((start) => this.table.query(key, { from, to }, start), startAfter)) {
        collect(page.items);
        if (missing === 0 || (sortKeyOf(page.lastKey) ?? to) >= to) break;
      }
    }
    return missing > 0 ? undefined : Buffer.concat(found as Uint8Array[]);
  }
}

/** The table operations shared by the reader and its writers, and the background work they leave behind. */
class CacheTable {
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly tableName: string,
  ) {}

  async put(item: Item, returnOld = false): Promise<Item | undefined> {
    const result = await this.doc.send({
      operation: 'PutItem',
      input: { TableName: this.tableName, Item: item, ReturnValues: returnOld ? 'ALL_OLD' : 'NONE' },
    });
    return result.Attributes;
  }

  query(key: string, range?: { from: number; to: number }, startAfter?: Item) {
    return this.doc.send({
      operation: 'Query',
      input: {
        TableName: this.tableName,
        KeyConditionExpression: range ? 'cache_key = :key AND #part BETWEEN :from AND :to' : 'cache_key = :key',
        ExpressionAttributeNames: range ? { '#part': 'part' } : undefined,
        ExpressionAttributeValues: range ? { ':key': key, ':from': range.from, ':to': range.to } : { ':key': key },
        ExclusiveStartKey: startAfter,
        ConsistentRead: true,
      },
    });
  }

  /** Best-effort removal of unreachable part items in the background; TTL removes whatever this misses. */
  deletePartsLater(key: string, partNumbers: number[]): void {
    if (partNumbers.length) this.track(this.deleteParts(key, partNumbers).catch(() => undefined));
  }

  track(work: Promise<unknown>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }

  async idle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }

  private async deleteParts(key: string, partNumbers: number[]): Promise<void> {
    for (let i = 0; i < partNumbers.length; i += BATCH_LIMIT) {
      const requests = partNumbers
        .slice(i, i + BATCH_LIMIT)
        .map((part) => ({ DeleteRequest: { Key: { cache_key: key, part } } }));
      // Whatever is still left after the last attempt is TTL's to remove; the next slice is tried all the same.
      await sendUntilProcessed(
        requests,
        'deletes',
        async (pending) => {
          const result = await this.doc.send(
            sentOnce({
              operation: 'BatchWriteItem',
              input: { RequestItems: { [this.tableName]: pending } },
            }),
          );
          return (result.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
        },
        5,
      ).catch((error: unknown) => {
        if (!(error instanceof UnprocessedError)) throw error;
      });
    }
  }
}

/** For a TTL of 0 (`max-age=0`): the response is served normally and nothing is stored. */
const NOTHING_STORED: CacheWriter = Object.freeze({
  append() {},
  commit: async () => {},
  abort() {},
});

type WriterState = 'open' | 'committing' | 'committed' | 'aborted';

class DynamoCacheWriter implements CacheWriter {
  private state: WriterState = 'open';
  private readonly gen = randomInt(1, MAX_GENERATION);
  private readonly buffer: PartBuffer;
  /** Part writes run in a few parallel chains, so a large body doesn't wait on one round trip per part. */
  private readonly lanes: Promise<void>[];
  private readonly written: number[] = [];
  private nextIndex = 1;
  /** The first write's failure (whatever it threw), rethrown by the commit. */
  private failure: unknown;

  constructor(
    private readonly table: CacheTable,
    private readonly limits: Required<DynamoResponseCacheOptions>,
    private readonly key: string,
    private readonly expiresAt: number,
  ) {
    this.buffer = new PartBuffer(limits.partBytes);
    this.lanes = Array.from({ length: limits.writeConcurrency }, () => Promise.resolve());
  }

  append(chunk: string): void {
    if (this.state !== 'open' || this.failure !== undefined) return;
    try {
      for (const part of this.buffer.push(chunk)) this.writePart(part);
      if (this.buffer.totalBytes > this.limits.maxBodyBytes) this.failure = this.tooLarge();
    } catch (error) {
      this.failure = error;
    }
  }

  async commit(meta: CachedResponseMeta): Promise<void> {
    if (this.state !== 'open') throw new CacheWriteError(`cache entry already ${this.state}`);
    this.state = 'committing';
    try {
      if (!isCacheableStatus(meta.status)) throw new CacheWriteError(`status ${meta.status} is not cached`);
      if (this.failure !== undefined) throw this.failure as Error;
      const { parts, rest, sha256, totalBytes } = this.buffer.finish();
      if (totalBytes > this.limits.maxBodyBytes) throw this.tooLarge();
      for (const part of parts) this.writePart(part);
      const inline = this.nextIndex === 1;
      if (!inline && rest.length) this.writePart(rest);
      await Promise.all(this.lanes);
      if (this.failure !== undefined) throw this.failure as Error;
      const head = headItem(this.key, {
        gen: this.gen,
        parts: inline ? 0 : this.nextIndex - 1,
        bytes: totalBytes,
        sha256,
        inline: inline ? rest : undefined,
        expiresAt: this.expiresAt,
        meta,
      });
      const previous = parseHead(await this.table.put(head, true));
      this.state = 'committed';
      // The replaced entry's parts are unreachable now that the head names another generation.
      if (previous && previous.gen !== this.gen)
        this.table.deletePartsLater(this.key, partNumbers(previous.gen, previous.parts));
    } catch (error) {
      this.state = 'aborted';
      this.cleanUp();
      throw error instanceof CacheWriteError
        ? error
        : new CacheWriteError('could not store the response', { cause: error });
    }
  }

  abort(): void {
    if (this.state !== 'open') return;
    this.state = 'aborted';
    this.cleanUp();
  }

  private writePart(bytes: Buffer): void {
    const index = this.nextIndex++;
    if (index >= SLOTS) {
      this.failure ??= this.tooLarge();
      return;
    }
    const part = this.gen * SLOTS + index;
    const lane = index % this.lanes.length;
    this.lanes[lane] = this.lanes[lane].then(async () => {
      if (this.failure !== undefined || this.state === 'aborted') return;
      try {
        await this.table.put({ cache_key: this.key, part, gen: this.gen, data: bytes, expires_at: this.expiresAt });
        this.written.push(part);
      } catch (error) {
        this.failure ??= error;
      }
    });
  }

  /** No head names this generation's parts; remove the ones written once in-flight writes settle. */
  private cleanUp(): void {
    this.table.track(Promise.all(this.lanes).then(() => this.table.deletePartsLater(this.key, this.written)));
  }

  private tooLarge(): CacheWriteError {
    return new CacheWriteError(`a response over ${this.limits.maxBodyBytes} bytes is not cached`);
  }
}

function partNumbers(gen: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => gen * SLOTS + i + 1);
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
