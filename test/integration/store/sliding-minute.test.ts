/**
 * The rate limit is a sliding minute counted in 1.5-second buckets (docs/errors-and-limits.md,
 * "The rate limit"), checked on DynamoDB Local with an injected clock: no 60-second span admits
 * more than the limit; a token sending steadily at 95 % of it is never refused, across clock-minute
 * boundaries and instances, even when its writes land out of order; every decision and
 * `x-proxy-ratelimit-*` figure is the bucket rule's, written out here; one UpdateItem per request
 * from any instance for a token in use; a token split over shards admits its limit and no more.
 */
import { hashSecret, newAccountId, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoTokenGate } from '../../../lambda/auth/dynamodb/token-gate';
import { gateKey, type GateSource } from '../../../lambda/auth/dynamodb/gate-item';
import type { GateVerdict } from '../../../lambda/auth/ports';
import { seededRandom } from '../../fakes/behaviour';
import { BUCKET_MS, bucketOf, LATE_BUCKETS, WINDOW_BUCKETS } from '../../../lambda/auth/sliding-minute';
import { notingClient } from '../../support/noting-client';
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

/** A gate whose clock, read after a refusal's answer, says `clock()` (the proxy's own clock, held by the test). */
function gate(limit: number, shardSize?: number, clock?: () => number): Gate {
  const calls: string[] = [];
  const counting = notingClient(tables.clients.doc, calls);
  const instance = new DynamoTokenGate(counting, tables.tables.rateLimits, limit, source, shardSize, clock);
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
 * admitted in buckets k-40 … (any later ones included, for a write landing late); `remaining` is
 * what that window has left after the decision. A write landing more than LATE_BUCKETS behind the
 * newest bucket counts in the oldest it may; `at` is the time it was counted at.
 */
function reference(limit: number) {
  const admitted: number[] = [];
  let newest = -Infinity;
  return (stamp: number) => {
    const bucket = Math.max(bucketOf(stamp), newest - LATE_BUCKETS);
    const at = Math.max(stamp, bucket * BUCKET_MS);
    const counted = admitted.filter((time) => bucketOf(time) >= bucket - WINDOW_BUCKETS).length;
    const ok = counted < limit;
    if (ok) {
      admitted.push(at);
      newest = Math.max(newest, bucket);
    }
    return { ok, at, remaining: Math.max(0, limit - counted - (ok ? 1 : 0)) };
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
  const leaves = (bucketOf(at57) + WINDOW_BUCKETS + 1) * BUCKET_MS;
  const at01 = MINUTE_START + MINUTE + 1_000;
  for (let i = 0; i < 100; i++) {
    expect(await instance.admit(token, at01 + i)).toMatchObject({
      kind: 'limited',
      rateLimit: { allowed: false, remaining: 0, resetAt: Math.ceil(leaves / 1000) },
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

test('a token sending steadily at 95 a minute (95 % of its limit of 100) through two instances is never refused, across minute boundaries', async () => {
  const token = await issued();
  const instances = [gate(100), gate(100)];
  const spacing = MINUTE / 95;
  // Starting mid-minute, for four minutes.
  for (let i = 0; i < 380; i++) {
    const verdict = await instances[i % 2]!.admit(token, MINUTE_START + 30_000 + Math.round(i * spacing));
    expect({ i, kind: verdict.kind }).toEqual({ i, kind: 'admitted' });
  }
});

test('a token at 95 % of its limit through three instances, its writes reaching the store up to 1.2 s out of step and out of order, is never refused', async () => {
  const token = await issued();
  const instances = [gate(100), gate(100), gate(100)];
  const random = seededRandom(95);
  const spacing = MINUTE / 95;
  // Each request is stamped when it arrives, up to 1.2 s after it was sent; they reach the store in the order they arrive.
  const stamps = Array.from({ length: 400 }, (_, i) => MINUTE_START + 20_000 + i * spacing + random() * 1_200)
    .map(Math.round)
    .sort((a, b) => a - b);
  // And the writes land out of that order too: each lands up to 2 s after its stamp.
  const landing = stamps.map((stamp) => ({ stamp, lands: stamp + random() * 2_000 })).sort((a, b) => a.lands - b.lands);
  const refused: number[] = [];
  for (const [i, { stamp }] of landing.entries())
    if ((await instances[i % 3]!.admit(token, stamp)).kind !== 'admitted') refused.push(stamp);
  expect(refused).toEqual([]);
});

test('Retry-After: 60 holds: a request refused at T is admitted at T + 60 s, not a moment before, with the reset announced', async () => {
  const token = await issued();
  let clock = MINUTE_START + 30_000;
  const instance = gate(5, undefined, () => clock);
  for (let i = 0; i < 5; i++) expect((await instance.admit(token, (clock += 10))).kind).toBe('admitted');
  // Refused in the same bucket as the five: they leave the window only when their bucket does, unless the refusal closes it.
  const refusedAt = (clock += 300);
  const refusal = await instance.admit(token, refusedAt);
  expect(refusal).toMatchObject({ kind: 'limited', rateLimit: { resetAt: Math.ceil((refusedAt + MINUTE) / 1000) } });
  // Refusals later in the minute keep it closed (each is counted against the same five).
  for (const later of [5_000, 30_000, 59_000]) {
    clock = refusedAt + later;
    expect((await gate(5, undefined, () => clock).admit(token, clock)).kind).toBe('limited');
  }
  clock = refusedAt + MINUTE - 1;
  expect((await instance.admit(token, clock)).kind).toBe('limited');
  clock = refusedAt + MINUTE;
  expect(await instance.admit(token, clock)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 4 } });
});

test('random bursts over five minutes through two instances, writes landing up to 4 s out of order: every decision and remaining count is the bucket rule’s, and no 60 s admit more than the limit', async () => {
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
    // A third of them were stamped up to 4 s before they reach the store (a slow instance): some land behind a later bucket.
    const stamp = random() < 0.3 ? at - Math.floor(random() * 4_000) : at;
    const verdict = await instances[Math.floor(random() * 2)]!.admit(token, stamp);
    const expected = exact(stamp);
    expect({
      i,
      kind: verdict.kind,
      remaining: 'rateLimit' in verdict ? verdict.rateLimit.remaining : undefined,
    }).toEqual({
      i,
      kind: expected.ok ? 'admitted' : 'limited',
      remaining: expected.remaining,
    });
    if (verdict.kind === 'admitted') admittedTimes.push(expected.at);
  }
  expect(busiestMinute(admittedTimes)).toBeLessThanOrEqual(limit);
  expect(at - MINUTE_START).toBeGreaterThan(4 * MINUTE);
});

test('refusals closing their buckets (Retry-After: 60) never let more than the limit into 60 s, with writes landing out of order across three instances', async () => {
  const limit = 10;
  const token = await issued();
  let landing = MINUTE_START + 40_000;
  const instances = [0, 1, 2].map(() => gate(limit, undefined, () => landing));
  const random = seededRandom(60);
  const admitted: number[] = [];
  let refusals = 0;
  for (let i = 0; i < 500; i++) {
    // Bursts and pauses; each write is stamped up to 1.4 s before it lands, and lands when the test's clock says.
    landing += random() < 0.1 ? Math.floor(random() * 15_000) : Math.floor(random() * 300);
    const stamp = landing - Math.floor(random() * 1_400);
    const verdict = await instances[i % 3]!.admit(token, stamp);
    if (verdict.kind === 'admitted') admitted.push(stamp);
    else refusals++;
  }
  expect(refusals).toBeGreaterThan(100);
  expect(busiestMinute(admitted)).toBeLessThanOrEqual(limit);
});

test('one conditional write per request: from any instance, fresh ones included, while the token is in use; from one that has seen it, after any pause', async () => {
  const token = await issued();
  await gate(10).admit(token, MINUTE_START + MINUTE - 3_000);
  const calls: string[] = [];
  // Each fresh instance's first write starts its bucket without knowing the item's newest: up to 9 s after it.
  for (let i = 0; i < 8; i++) {
    const fresh = gate(10);
    await fresh.admit(token, MINUTE_START + MINUTE + 2_000 + i * 5_000);
    calls.push(...fresh.calls);
  }
  expect(calls).toEqual(Array(8).fill('UpdateItem'));
  // An instance that has seen the item knows its newest bucket, however long ago.
  const seen = gate(10);
  let at = MINUTE_START + 2 * MINUTE;
  await seen.admit(token, at);
  for (const pause of [20_000, 45_000, 5 * MINUTE]) {
    seen.calls.length = 0;
    at += pause;
    await seen.admit(token, at);
    expect({ pause, calls: seen.calls }).toEqual({ pause, calls: ['UpdateItem'] });
  }
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
