import { cacheKey } from '../../../lambda/cache/cache-key';
import { CacheWriteError, type CachedResponseMeta } from '../../../lambda/cache/response-cache';
import type { DynamoClients } from '../../../lambda/store/dynamodb/client';
import { DynamoResponseCache } from '../../../lambda/cache/dynamodb/cache-store';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { createTestTables } from '../../support/tables';
import { EVENTUALLY_MS, eventually } from '../../support/patience';

// Near the real clock: DynamoDB Local's own TTL clean-up deletes items whose expiry has passed in real time.
const NOW = Math.floor(Date.now() / 1000) * 1000 + 250;
const HOUR = 3600;

let clients: DynamoClients;
let tableName: string;
let cache: DynamoResponseCache;
let keyCounter = 0;

beforeAll(async () => {
  const created = await createTestTables();
  clients = created.clients;
  tableName = created.tables.cache;
  cache = new DynamoResponseCache(clients.doc, tableName);
});

afterAll(async () => {
  await cache.idle();
  clients.raw.destroy();
});

function freshKey(account = 'acc-1'): string {
  return cacheKey({
    accountId: account,
    provider: 'prov-a',
    kind: 'messages',
    body: { model: 'fam-sonnet-4-6', messages: [{ role: 'user', content: `q${keyCounter++}` }] },
  });
}

const USAGE = { inputTokens: 19, outputTokens: 24, cacheReadTokens: 3, cacheWriteTokens: 4 };

function meta(overrides: Partial<CachedResponseMeta> = {}): CachedResponseMeta {
  return {
    format: 'sse',
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    model: 'fam-sonnet-4-6',
    usage: USAGE,
    costNanos: 123_456,
    storedAt: NOW,
    ...overrides,
  };
}

async function store(
  key: string,
  body: string,
  options: { ttl?: number; chunkChars?: number; meta?: Partial<CachedResponseMeta> } = {},
): Promise<void> {
  const writer = cache.open(key, options.ttl ?? HOUR, NOW);
  const size = options.chunkChars ?? 4096;
  for (let i = 0; i < body.length; i += size) writer.append(body.slice(i, i + size));
  await writer.commit(meta(options.meta));
}

async function itemsOf(key: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await clients.doc.send({
      operation: 'Query',
      input: {
        TableName: tableName,
        KeyConditionExpression: 'cache_key = :k',
        ExpressionAttributeValues: { ':k': key },
        ExclusiveStartKey: start,
      },
    });
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Changes one stored attribute behind the cache's back. */
async function tamper(key: string, part: unknown, attribute: string, value: unknown): Promise<void> {
  await clients.doc.send({
    operation: 'UpdateItem',
    input: {
      TableName: tableName,
      Key: { cache_key: key, part },
      UpdateExpression: 'SET #a = :v',
      ExpressionAttributeNames: { '#a': attribute },
      ExpressionAttributeValues: { ':v': value },
    },
  });
}

/** Part writes run in the background while a response streams; wait until some have landed. */
async function waitForItems(key: string, count: number): Promise<void> {
  expect(
    await eventually(async () => ((await itemsOf(key)).length >= count ? true : undefined), EVENTUALLY_MS, 20),
  ).toBe(true);
}

/** Text with 1-, 2-, 3- and 4-byte UTF-8 characters, shaped like an SSE stream. */
function multiByteStream(targetBytes: number): string {
  const parts: string[] = [];
  for (let i = 0, bytes = 0; bytes < targetBytes; i++) {
    parts.push(
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${i} é€😀漢字 ✓ naïve"}}\n\n`,
    );
    bytes += Buffer.byteLength(parts[i]);
  }
  return parts.join('');
}

describe('DynamoResponseCache', () => {
  it('round-trips a small response with its metadata in one item', async () => {
    const key = freshKey();
    const body = 'event: message_start\ndata: {"type":"message_start"}\n\n';
    await store(key, body, { chunkChars: 7 });
    await expect(cache.get(key, NOW + 1000)).resolves.toEqual({ ...meta(), body });
    expect(await itemsOf(key)).toHaveLength(1);
  });

  it('round-trips a JSON response without a model, and an empty body', async () => {
    const key = freshKey();
    const body = JSON.stringify({ id: 'x', content: [{ type: 'text', text: 'héllo' }] });
    await store(key, body, { meta: { format: 'json', contentType: 'application/json', model: undefined } });
    const entry = await cache.get(key, NOW);
    expect(entry).toEqual({ ...meta({ format: 'json', contentType: 'application/json' }), model: undefined, body });
    expect(entry && 'model' in entry).toBe(false);
    const empty = freshKey();
    await store(empty, '');
    await expect(cache.get(empty, NOW)).resolves.toMatchObject({ body: '' });
  });

  it.each([
    ['1.5 MB', 1.5 * 1024 * 1024],
    ['4 MB', 4 * 1024 * 1024],
  ])(
    'round-trips a %s stream with multi-byte characters byte for byte, split into parts under 400 KB',
    async (_, size) => {
      const key = freshKey();
      const body = multiByteStream(size);
      await store(key, body, { chunkChars: 1000 });
      const entry = await cache.get(key, NOW);
      expect(entry?.body.length).toBe(body.length);
      expect(Buffer.from(entry!.body, 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true);
      const items = await itemsOf(key);
      expect(items.length).toBe(1 + Math.ceil(Buffer.byteLength(body) / (300 * 1024)));
      for (const item of items)
        expect((item.data as Uint8Array | undefined)?.length ?? 0).toBeLessThanOrEqual(300 * 1024);
    },
  );

  it('round-trips a large body appended in one piece', async () => {
    const key = freshKey();
    const body = JSON.stringify({ text: '€'.repeat(700_000) });
    await store(key, body, { chunkChars: body.length, meta: { format: 'json' } });
    await expect(cache.get(key, NOW)).resolves.toMatchObject({ body });
  });

  it('enforces expiry on read, whatever DynamoDB still holds', async () => {
    const key = freshKey();
    await store(key, 'data: {}\n\n', { ttl: 60 });
    await expect(cache.get(key, NOW + 59_000)).resolves.toBeDefined();
    await expect(cache.get(key, NOW + 61_000)).resolves.toBeUndefined();
    const [head] = await itemsOf(key);
    // Rounded up to whole seconds: an entry lives at least its TTL and at most a second more.
    expect(head.expires_at).toBe(Math.ceil(NOW / 1000) + 60);
    await expect(cache.get(key, NOW + 60_000 - 1)).resolves.toBeDefined();
  });

  it('a TTL of 0 stores nothing', async () => {
    const key = freshKey();
    await store(key, 'data: {}\n\n', { ttl: 0 });
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
    expect(await itemsOf(key)).toEqual([]);
  });

  it('an aborted writer leaves nothing visible and cleans up its parts', async () => {
    const key = freshKey();
    const writer = cache.open(key, HOUR, NOW);
    writer.append(multiByteStream(1024 * 1024));
    await waitForItems(key, 2);
    writer.abort();
    writer.append('more');
    await expect(writer.commit(meta())).rejects.toBeInstanceOf(CacheWriteError);
    await cache.idle();
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
    expect(await itemsOf(key)).toEqual([]);
  });

  it('an aborted replacement leaves the previous entry in place', async () => {
    const key = freshKey();
    await store(key, 'first');
    const writer = cache.open(key, HOUR, NOW);
    writer.append(multiByteStream(700 * 1024));
    writer.abort();
    await cache.idle();
    await expect(cache.get(key, NOW)).resolves.toMatchObject({ body: 'first' });
  });

  it('refuses to store a non-2xx response', async () => {
    const key = freshKey();
    const writer = cache.open(key, HOUR, NOW);
    writer.append('{"error":{}}');
    await expect(writer.commit(meta({ status: 500 }))).rejects.toThrow(/status 500/);
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
  });

  it('refuses a response over the size limit', async () => {
    const small = new DynamoResponseCache(clients.doc, tableName, { partBytes: 1024, maxBodyBytes: 4096 });
    const key = freshKey();
    const writer = small.open(key, HOUR, NOW);
    writer.append('x'.repeat(5000));
    await expect(writer.commit(meta())).rejects.toThrow(/not cached/);
    await small.idle();
    expect(await itemsOf(key)).toEqual([]);
  });

  it('a commit can only happen once', async () => {
    const key = freshKey();
    const writer = cache.open(key, HOUR, NOW);
    writer.append('once');
    await writer.commit(meta());
    await expect(writer.commit(meta())).rejects.toThrow(/already committed/);
    writer.abort();
    await expect(cache.get(key, NOW)).resolves.toMatchObject({ body: 'once' });
  });

  it('keeps the old entry readable while a replacement streams, then switches atomically and removes the old parts', async () => {
    const key = freshKey();
    const oldBody = multiByteStream(900 * 1024);
    const newBody = multiByteStream(650 * 1024).replaceAll('é', 'É');
    await store(key, oldBody);
    const oldItems = await itemsOf(key);

    const writer = cache.open(key, HOUR, NOW + 5000);
    writer.append(newBody.slice(0, 400_000));
    await expect(cache.get(key, NOW)).resolves.toMatchObject({ body: oldBody });
    writer.append(newBody.slice(400_000));
    await writer.commit(meta({ storedAt: NOW + 5000 }));
    await expect(cache.get(key, NOW + 6000)).resolves.toMatchObject({ body: newBody, storedAt: NOW + 5000 });

    await cache.idle();
    const oldPartNumbers = oldItems.filter((i) => i.part !== 0).map((i) => i.part);
    const remaining = (await itemsOf(key)).map((i) => i.part);
    expect(remaining.filter((p) => oldPartNumbers.includes(p))).toEqual([]);
    expect(remaining).toHaveLength(1 + Math.ceil(Buffer.byteLength(newBody) / (300 * 1024)));
  });

  it('two writers racing for one key never mix generations: the last commit wins whole', async () => {
    const key = freshKey();
    const a = cache.open(key, HOUR, NOW);
    const b = cache.open(key, HOUR, NOW);
    const bodyA = multiByteStream(800 * 1024).replaceAll('✓', 'A');
    const bodyB = multiByteStream(800 * 1024).replaceAll('✓', 'B');
    a.append(bodyA);
    b.append(bodyB);
    await b.commit(meta());
    await a.commit(meta());
    await expect(cache.get(key, NOW)).resolves.toMatchObject({ body: bodyA });
  });

  it('reads a head whose parts were overwritten by another generation as a miss', async () => {
    const key = freshKey();
    await store(key, multiByteStream(700 * 1024));
    const parts = (await itemsOf(key)).filter((i) => i.part !== 0);
    await tamper(key, parts[1].part, 'gen', 12345);
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
  });

  it('reads a tampered part as a miss, never as a wrong answer', async () => {
    const key = freshKey();
    const body = multiByteStream(700 * 1024);
    await store(key, body);
    const parts = (await itemsOf(key)).filter((i) => i.part !== 0);
    const data = Buffer.from(parts[0].data as Uint8Array);
    data[10] ^= 0x01;
    await tamper(key, parts[0].part, 'data', data);
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
  });

  it('reads a missing part as a miss', async () => {
    const key = freshKey();
    await store(key, multiByteStream(700 * 1024));
    const parts = (await itemsOf(key)).filter((i) => i.part !== 0);
    await clients.doc.send({
      operation: 'DeleteItem',
      input: { TableName: tableName, Key: { cache_key: key, part: parts.at(-1)!.part } },
    });
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
  });

  it('reads a tampered inline body or a malformed head as a miss', async () => {
    const key = freshKey();
    await store(key, 'the right answer');
    await tamper(key, 0, 'data', Buffer.from('the wrong answer'));
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();

    const other = freshKey();
    await store(other, 'fine');
    await tamper(other, 0, 'format', 'xml');
    await expect(cache.get(other, NOW)).resolves.toBeUndefined();
  });

  it('reads parts without a head (a writer still streaming) as a miss', async () => {
    const key = freshKey();
    const writer = cache.open(key, HOUR, NOW);
    writer.append(multiByteStream(1024 * 1024));
    await waitForItems(key, 3);
    await expect(cache.get(key, NOW)).resolves.toBeUndefined();
    writer.abort();
  });

  it('keeps the entries of two accounts with the same request apart', async () => {
    const request = {
      provider: 'prov-b',
      kind: 'chat' as const,
      body: { model: 'fam-4o-mini', messages: [{ role: 'user', content: 'same question' }] },
    };
    const keyA = cacheKey({ accountId: 'account-a', ...request });
    const keyB = cacheKey({ accountId: 'account-b', ...request });
    expect(keyA).not.toBe(keyB);
    await store(keyA, 'answer for A');
    await expect(cache.get(keyB, NOW)).resolves.toBeUndefined();
    await store(keyB, 'answer for B');
    await expect(cache.get(keyA, NOW)).resolves.toMatchObject({ body: 'answer for A' });
    await expect(cache.get(keyB, NOW)).resolves.toMatchObject({ body: 'answer for B' });
    await expect(cache.get(cacheKey({ accountId: 'account-c', ...request }), NOW)).resolves.toBeUndefined();
  });

  it('a hit costs one store read, plus one per extra megabyte for large entries', async () => {
    const reads: string[] = [];
    // The real client, with each call it sends noted.
    const counted = new DynamoResponseCache(
      {
        send: ((command: StoreCommand) => (
          reads.push(command.operation),
          clients.doc.send(command)
        )) as DocumentClient['send'],
      },
      tableName,
    );
    const small = freshKey();
    await store(small, multiByteStream(250 * 1024));
    reads.length = 0;
    await expect(counted.get(small, NOW)).resolves.toBeDefined();
    expect(reads).toEqual(['Query']);

    const large = freshKey();
    const body = multiByteStream(4 * 1024 * 1024);
    await store(large, body);
    reads.length = 0;
    await expect(counted.get(large, NOW)).resolves.toMatchObject({ body });
    expect(reads.every((r) => r === 'Query')).toBe(true);
    expect(reads.length).toBeLessThanOrEqual(Math.ceil(Buffer.byteLength(body) / (1024 * 1024)) + 1);
  });
});
