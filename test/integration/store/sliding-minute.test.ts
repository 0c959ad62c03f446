/**
 * The rate limit is a sliding minute counted in 3-second buckets (docs/errors-and-limits.md, "The
 * rate limit"), checked on DynamoDB Local with an injected clock: no 60-second span admits more
 * than the limit; a token sending steadily under 60/63 of it is never refused, across clock-minute
 * boundaries and instances; every decision and `x-ratelimit-*` figure is the bucket rule's,
 * written out here; one UpdateItem per request, from any instance, fresh ones included; a token
 * split over shards admits its limit and no more.
 */
import { hashSecret, newAccountId, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoTokenGate } from '../../../lambda/auth/dynamodb/token-gate';
import { gateKey, type GateSource } from '../../../lambda/auth/dynamodb/gate-item';
import type { GateVerdict } from '../../../lambda/auth/ports';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { seededRandom } from '../../fakes/behaviour';
import { BUCKET_MS, bucketOf, WINDOW_BUCKETS } from '../../../lambda/auth/sliding-minute';
import { createTestTables } from '../../support/tables';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let accounts: DynamoAccountStore;
const MINUTE = 60_000;
/** A clock minute to start from, well in the past (the gate takes the time it is given). */
const MINUTE_START = Math.floor(Date.UTC(2026, 0, 5, 10, 0) / MINUTE) * MINUTE;

const source: GateSource = async (token) => {
  const record = await accounts.getToken(token.accountId, token.tokenId);
  return record && { record, tokenBudget: false };
};

type Gate = { admit(token: ParsedToken, at: number): Promise<GateVerdict>; calls: string[] };

function gate(limit: number, shardSize?: number): Gate {
  const calls: string[] = [];
  const doc = tables.clients.doc;
  const counting: DocumentClient = {
    send: ((command: StoreCommand) => (
      calls.push(command.operation),
      doc.send(command as never)
    )) as DocumentClient['send'],
  };
  const instance = new DynamoTokenGate(counting, tables.tables.rateLimits, limit, source, shardSize);
  return {
    calls,
    admit: (token, at) =>
      instance.admit({ accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) }, at),
  };
}

async function issued(): Promise<ParsedToken> {
  const accountId = newAccountId();
  await accounts.createAccount({ accountId, createdAt: new Date(MINUTE_START).toISOString() });
  const { token } = await issueToken(accounts, { accountId, scopes: ['proxy'], now: new Date(MINUTE_START) });
  return parseToken(token)!;
}

/**
 * The bucket rule, written out: a request at bucket k is admitted when fewer than `limit` were
 * admitted in buckets k-20 … k; `remaining` is what that window has left after the decision.
 */
function reference(limit: number) {
  const admitted: number[] = [];
  return (at: number) => {
    const first = bucketOf(at) - WINDOW_BUCKETS + 1;
    const counted = admitted.filter((time) => bucketOf(time) >= first).length;
    const ok = counted < limit;
    if (ok) admitted.push(at);
    return { ok, remaining: Math.max(0, limit - counted - (ok ? 1 : 0)) };
  };
}

/** The largest number of admissions inside any 60-second span. */
function busiestMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= MINUTE) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

beforeAll(async () => {
  tables = await createTestTables();
  accounts = new DynamoAccountStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
});
afterAll(() => tables.clients.raw.destroy());

test('100 requests at :57 and 100 more at :01 of the next minute: the second hundred is refused until the first leaves the window, at the reset it announced', async () => {
  const token = await issued();
  const instance = gate(100);
  const at57 = MINUTE_START + 57_000;
  for (let i = 0; i < 100; i++)
    expect(await instance.admit(token, at57 + i)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 99 - i } });
  const leaves = (bucketOf(at57) + WINDOW_BUCKETS) * BUCKET_MS;
  const at01 = MINUTE_START + MINUTE + 1_000;
  for (let i = 0; i < 100; i++) {
    expect(await instance.admit(token, at01 + i)).toMatchObject({
      kind: 'limited',
      rateLimit: { allowed: false, remaining: 0, resetAt: leaves / 1000 },
    });
  }
  // Not a moment before the announced reset, then all of the first hundred's room at once.
  expect((await gate(100).admit(token, leaves - 1)).kind).toBe('limited');
  for (let i = 0; i < 100; i++)
    expect(await instance.admit(token, leaves + i)).toMatchObject({
      kind: 'admitted',
      rateLimit: { remaining: 99 - i },
    });
  expect((await instance.admit(token, leaves + 100)).kind).toBe('limited');
});

test('a token sending steadily at 95 a minute (under 60/63 of its limit of 100) through two instances is never refused, across minute boundaries', async () => {
  const token = await issued();
  const instances = [gate(100), gate(100)];
  const spacing = MINUTE / 95;
  // Starting mid-minute, for four minutes.
  for (let i = 0; i < 380; i++) {
    const verdict = await instances[i % 2]!.admit(token, MINUTE_START + 30_000 + Math.round(i * spacing));
    expect({ i, kind: verdict.kind }).toEqual({ i, kind: 'admitted' });
  }
});

test('random bursts over five minutes through two instances: every decision and remaining count is the bucket rule’s, and no 60 s admit more than the limit', async () => {
  const limit = 20;
  const token = await issued();
  const instances = [gate(limit), gate(limit)];
  const exact = reference(limit);
  const random = seededRandom(2718);
  const admittedTimes: number[] = [];
  let at = MINUTE_START + 50_000;
  for (let i = 0; i < 400; i++) {
    // Bursts of close requests with pauses between, so windows fill up and drain at every phase of the minute.
    at += random() < 0.15 ? Math.floor(random() * 20_000) : Math.floor(random() * 400);
    const verdict = await instances[Math.floor(random() * 2)]!.admit(token, at);
    const expected = exact(at);
    expect({
      i,
      kind: verdict.kind,
      remaining: 'rateLimit' in verdict ? verdict.rateLimit.remaining : undefined,
    }).toEqual({
      i,
      kind: expected.ok ? 'admitted' : 'limited',
      remaining: expected.remaining,
    });
    if (verdict.kind === 'admitted') admittedTimes.push(at);
  }
  expect(busiestMinute(admittedTimes)).toBeLessThanOrEqual(limit);
  expect(at - MINUTE_START).toBeGreaterThan(4 * MINUTE);
});

test('one conditional write per request, from any instance, fresh ones included, once the token has been used', async () => {
  const token = await issued();
  await gate(10).admit(token, MINUTE_START + 40_000);
  const calls: string[] = [];
  for (let i = 0; i < 8; i++) {
    const fresh = gate(10);
    await fresh.admit(token, MINUTE_START + MINUTE + 2_000 + i * 5_000);
    calls.push(...fresh.calls);
  }
  expect(calls).toEqual(Array(8).fill('UpdateItem'));
});

test('a limit of 1 admits one request per window; the reset it announces is when the next one is admitted', async () => {
  const token = await issued();
  const instance = gate(1);
  const at = MINUTE_START + 59_000;
  expect(await instance.admit(token, at)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 0 } });
  const refused = await instance.admit(token, at + 2_000);
  expect(refused.kind).toBe('limited');
  const resetAt = 'rateLimit' in refused ? refused.rateLimit.resetAt * 1000 : NaN;
  expect((await gate(1).admit(token, resetAt - 1)).kind).toBe('limited');
  expect((await gate(1).admit(token, resetAt)).kind).toBe('admitted');
});

test('a token split over four shards (limit 40, 10 a shard) admits exactly its limit through three instances, then refuses', async () => {
  const token = await issued();
  const instances = [gate(40, 10), gate(40, 10), gate(40, 10)];
  const at = MINUTE_START + 10_000;
  const kinds: string[] = [];
  // A request whose shard is full tries one other: keep sending until all 40 are taken (a few may be refused first).
  for (let i = 0; i < 200 && kinds.filter((kind) => kind === 'admitted').length < 40; i++)
    kinds.push((await instances[i % 3]!.admit(token, at + i)).kind);
  expect(kinds.filter((kind) => kind === 'admitted')).toHaveLength(40);
  for (let i = 0; i < 20; i++) expect((await instances[i % 3]!.admit(token, at + 1_000 + i)).kind).toBe('limited');
  const items = await Promise.all(
    [0, 1, 2, 3].map((shard) =>
      tables.clients.doc.send({
        operation: 'GetItem',
        input: { TableName: tables.tables.rateLimits, Key: gateKey(token.tokenId, shard), ConsistentRead: true },
      }),
    ),
  );
  expect(items.map(({ Item }) => Item?.n)).toEqual([10, 10, 10, 10]);
});
