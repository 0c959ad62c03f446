/**
 * The token gate's item, written by every proxied request, holds a copy of what authentication
 * needs and the rate counters of its share of the limit (lambda/auth/sliding-minute.ts): a count
 * and a fixed ring of one number per 1.5-second bucket, so its size does not follow the traffic.
 * DynamoDB bills a write by the larger of the item's sizes before and after it, one write unit per
 * started KB. Measured here on DynamoDB Local, whose consumed capacity is DynamoDB's billing rule:
 * a long-used token with every bucket of its window recorded, at the default and at the highest
 * per-token limit (8 shards). lib/cost-model.ts states the same figures (docs/deploy.md renders
 * them), so a change to the item's layout that moves them fails here.
 */
import { hashSecret, newAccountId, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoTokenGate } from '../../../lambda/auth/dynamodb/token-gate';
import { gateKey, type GateSource } from '../../../lambda/auth/dynamodb/gate-item';
import {
  AHEAD_BUCKETS,
  BUCKET_MS,
  bucketOf,
  LATE_BUCKETS,
  RING_SLOTS,
  shardCount,
  shareOf,
  slotOf,
  WINDOW_BUCKETS,
} from '../../../lambda/auth/sliding-minute';
import { MAX_REQUESTS_PER_MINUTE } from '../../../lambda/auth/token-limits';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GATE_WRITE_UNITS, gateItemBytes } from '../../../lib/cost-model';
import { DEFAULTS } from '../../../lib/settings';
import { itemSize } from '../../reliability/support/partition-heat';
import { createTestTables } from '../../support/tables';

jest.setTimeout(600_000);

const MINUTE = 60_000;
const MINUTE_START = Math.floor(Date.UTC(2026, 0, 5, 10, 0) / MINUTE) * MINUTE;

let tables: Awaited<ReturnType<typeof createTestTables>>;
let accounts: DynamoAccountStore;
const source: GateSource = async (token) => {
  const record = await accounts.getToken(token.accountId, token.tokenId);
  return record && { record, tokenBudget: false };
};

beforeAll(async () => {
  tables = await createTestTables();
  accounts = new DynamoAccountStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
});
afterAll(() => tables.clients.raw.destroy());

/** A gate whose writes report the write units DynamoDB charged for them. */
function measuredGate(limit: number) {
  const units: number[] = [];
  const doc = tables.clients.doc;
  const measuring: DocumentClient = {
    send: (async (command: StoreCommand) => {
      if (command.operation !== 'UpdateItem') return doc.send(command as never);
      const output = await doc.send({ ...command, input: { ...command.input, ReturnConsumedCapacity: 'TOTAL' } });
      units.push(output.ConsumedCapacity?.CapacityUnits ?? Number.NaN);
      return output;
    }) as DocumentClient['send'],
  };
  const gate = new DynamoTokenGate(measuring, tables.tables.rateLimits, limit, source);
  return {
    units,
    admit: (token: ParsedToken, at: number) =>
      gate.admit({ accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) }, at),
  };
}

/** A token as an account's first one is: it may proxy and manage. */
async function issued(requestsPerMinute?: number): Promise<ParsedToken> {
  const accountId = newAccountId();
  await accounts.createAccount({ accountId, createdAt: new Date(MINUTE_START).toISOString() });
  const { token, tokenId } = await issueToken(accounts, {
    accountId,
    scopes: ['proxy', 'manage'],
    now: new Date(MINUTE_START),
  });
  if (requestsPerMinute) await accounts.updateToken(accountId, tokenId, { limits: { requestsPerMinute } });
  return parseToken(token)!;
}

/** The counters of every shard of a token's gate set as a long-used token's are: a billion admissions counted, its whole ring set. */
async function longUsed(token: ParsedToken, limit: number): Promise<void> {
  const shards = shardCount(limit);
  const before = bucketOf(MINUTE_START) - 1;
  const ring: Record<string, number> = {};
  for (let bucket = before - WINDOW_BUCKETS - LATE_BUCKETS; bucket <= before; bucket++)
    ring[`:${slotOf(bucket)}`] = 1e9;
  const sets = Object.keys(ring).map((value) => `${value.slice(1)} = ${value}`);
  // The slots ahead of the newest bucket are empty, as every write that starts a bucket leaves them.
  const ahead = Array.from({ length: AHEAD_BUCKETS }, (_, i) => slotOf(before + 1 + i));
  for (let shard = 0; shard < shards; shard++) {
    const share = shareOf(limit, shards, shard);
    await tables.clients.doc.send({
      operation: 'UpdateItem',
      input: {
        TableName: tables.tables.rateLimits,
        Key: gateKey(token.tokenId, shard),
        UpdateExpression: `SET n = :n, m = :m, m_limit = :share, b = :b, ${sets.join(', ')} REMOVE ${ahead.join(', ')}`,
        ExpressionAttributeValues: { ':n': 1e9, ':m': 1e9 - share, ':share': share, ':b': before, ...ring },
      },
    });
  }
}

for (const limit of [DEFAULTS.rateLimitPerMinute, MAX_REQUESTS_PER_MINUTE]) {
  test(`a token at ${limit.toLocaleString('en')} a minute: each gate item stays under 1 KB with every bucket of its window recorded, and each write is 1 unit`, async () => {
    const token = await issued(limit === DEFAULTS.rateLimitPerMinute ? undefined : limit);
    const shards = shardCount(limit);
    // Its shards built (first use), then set as a long-used token's.
    const gate = measuredGate(DEFAULTS.rateLimitPerMinute);
    for (let i = 0; i < (shards > 1 ? 100 : 1); i++) await gate.admit(token, MINUTE_START - 10 * MINUTE + i);
    await longUsed(token, limit);
    gate.units.length = 0;
    // Requests in every bucket of the window (each shard's ring is set whichever buckets it sees:
    // a write that starts a bucket starts those between too).
    const perBucket = shards > 1 ? 2 * shards : 2;
    for (let bucket = 0; bucket <= WINDOW_BUCKETS; bucket++)
      for (let i = 0; i < perBucket; i++)
        expect((await gate.admit(token, MINUTE_START + bucket * BUCKET_MS + i)).kind).toBe('admitted');
    const items = await Promise.all(
      Array.from({ length: shards }, async (_, shard) => {
        const { Item } = await tables.clients.raw.send(
          new GetItemCommand({
            TableName: tables.tables.rateLimits,
            Key: { counter_key: { S: gateKey(token.tokenId, shard).counter_key } },
            ConsistentRead: true,
          }),
        );
        return Item as Record<string, { M?: object }>;
      }),
    );
    const largest = Math.max(...items.map((item) => itemSize(item)));
    console.log(`limit ${limit}: ${shards} shards, largest gate item ${largest} bytes`);
    // Every slot of the ring set on the largest item, but the empty ones kept ahead of its newest bucket.
    const slots = (item: Record<string, unknown>) => Object.keys(item).filter((name) => /^r\d+$/.test(name)).length;
    expect(Math.max(...items.map(slots))).toBe(RING_SLOTS - AHEAD_BUCKETS);
    // lib/cost-model.ts states the largest size (docs/deploy.md renders it): at most that, within 5%; DynamoDB charged 1 unit a write.
    expect(largest).toBeLessThanOrEqual(gateItemBytes());
    expect(largest).toBeGreaterThanOrEqual(gateItemBytes() * 0.95);
    expect(new Set(gate.units)).toEqual(new Set([GATE_WRITE_UNITS]));
    expect(GATE_WRITE_UNITS).toBe(1);
  });
}
