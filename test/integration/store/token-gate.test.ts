/**
 * The token gate on DynamoDB Local: one conditional UpdateItem checks the token and counts the
 * request; a forged or revoked token counts nothing; revocation and budget changes made through
 * the stores reach every gate at once; a token issued before gates existed gets one on first use.
 */
import { hashSecret, newAccountId, newToken, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { accountPk } from '../../../lambda/store/dynamodb/account-partition';
import { DynamoBudgetStore } from '../../../lambda/budgets/dynamodb/budget-store';
import { DynamoTokenGate } from '../../../lambda/auth/dynamodb/token-gate';
import { gateKey, type GateSource } from '../../../lambda/auth/dynamodb/gate-item';
import type { GateVerdict } from '../../../lambda/auth/ports';
import { notingClient } from '../../support/noting-client';
import { createTestTables } from '../../support/tables';
import { BUCKET_MS, bucketOf, RING_SLOTS, WINDOW_BUCKETS } from '../../../lambda/auth/sliding-minute';
import { seededRandom } from '../../fakes/behaviour';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let accounts: DynamoAccountStore;
let budgets: DynamoBudgetStore;
const LIMIT = 5;
const MINUTE = 60_000;
const now = Math.floor(Date.now() / MINUTE) * MINUTE + 1_000;

/** The real client, with every operation it sends noted. */
const countingClient = (sent: string[]) => notingClient(tables.clients.doc, sent);

const source: GateSource = async (token, at) => {
  const [record, budget] = await Promise.all([
    accounts.getToken(token.accountId, token.tokenId),
    budgets.statusOf(token.accountId, { kind: 'token', tokenId: token.tokenId }, at),
  ]);
  return record && { record, tokenBudget: budget !== undefined };
};

/** One instance's gate, its clock held at `now`; tokens are presented as a request presents them (the secret's hash). */
function gate(sent: string[] = []): { admit(token: ParsedToken, at: number): Promise<GateVerdict> } {
  const instance = new DynamoTokenGate(
    countingClient(sent),
    tables.tables.rateLimits,
    LIMIT,
    source,
    undefined,
    () => now,
  );
  return {
    admit: (token, at) =>
      instance.admit({ accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) }, at),
  };
}

async function issued(): Promise<ParsedToken> {
  const accountId = newAccountId();
  await accounts.createAccount({ accountId, createdAt: new Date(now).toISOString() });
  const { token } = await issueToken(accounts, { accountId, scopes: ['proxy'], now: new Date(now) });
  return parseToken(token)!;
}

/** What a gate item holds besides its counters: its key, the token's copy, its flags and last use. */
const COPY = new Set([
  'counter_key',
  'account_id',
  'token_id',
  'secret_hash',
  'scopes',
  'created_at',
  'token_budget',
  'last_used_at',
  'revoked_at',
  'tags',
  'requests_per_minute',
  'models',
]);

async function gateItem(tokenId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await tables.clients.doc.send({
    operation: 'GetItem',
    input: { TableName: tables.tables.rateLimits, Key: gateKey(tokenId), ConsistentRead: true },
  });
  return Item;
}

beforeAll(async () => {
  tables = await createTestTables();
  // With the proxy's default limit, as the composition root builds it: a new token's gate is ready for its first request.
  accounts = new DynamoAccountStore(
    tables.clients.doc,
    tables.tables.accounts,
    tables.tables.rateLimits,
    undefined,
    undefined,
    LIMIT,
  );
  budgets = new DynamoBudgetStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
});
afterAll(() => tables.clients.raw.destroy());

test('a real token is checked and counted in one UpdateItem, and the count reaches the limit across two instances', async () => {
  const token = await issued();
  const sent: string[] = [];
  const [first, second] = [gate(sent), gate(sent)];
  const verdicts: GateVerdict[] = [];
  for (let i = 0; i < LIMIT + 2; i++) verdicts.push(await (i % 2 ? second : first).admit(token, now));
  // One call each, and one more, once: the first refusal that fills the bucket for good records its time (Retry-After: 60).
  expect(sent).toEqual(Array(LIMIT + 3).fill('UpdateItem'));
  expect(verdicts.map((v) => v.kind)).toEqual([...Array(LIMIT).fill('admitted'), 'limited', 'limited']);
  const admitted = verdicts[0] as Extract<GateVerdict, { kind: 'admitted' | 'limited' }>;
  expect(admitted.record).toMatchObject({
    accountId: token.accountId,
    tokenId: token.tokenId,
    scopes: ['proxy'],
    secretHash: hashSecret(token.secret),
  });
  // Room grows again when the bucket of the oldest request counted leaves the window (sliding-minute.ts)…
  const leaves = (bucketOf(now) + WINDOW_BUCKETS + 1) * BUCKET_MS;
  expect(admitted.rateLimit).toEqual({
    allowed: true,
    limit: LIMIT,
    remaining: LIMIT - 1,
    resetAt: Math.ceil(leaves / 1000),
  });
  // …or, once a refusal has closed that bucket, 60 s after the refusal: Retry-After: 60.
  expect(verdicts[LIMIT]).toMatchObject({
    kind: 'limited',
    rateLimit: { allowed: false, remaining: 0, resetAt: Math.ceil((now + MINUTE) / 1000) },
  });
  expect((await first.admit(token, now + MINUTE - 1)).kind).toBe('limited');
  expect(await first.admit(token, now + MINUTE)).toMatchObject({
    kind: 'admitted',
    rateLimit: { remaining: LIMIT - 1 },
  });
});

test('a forged secret is refused and counts nothing; the real token keeps its whole minute', async () => {
  const token = await issued();
  const forged = { ...token, secret: newToken(token.accountId).parsed.secret };
  const instance = gate();
  for (let i = 0; i < LIMIT * 2; i++) expect((await instance.admit(forged, now)).kind).toBe('refused');
  expect(await instance.admit(token, now)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: LIMIT - 1 } });
});

test('a revocation reaches the gate in its own transaction: the very next request is refused, on any instance', async () => {
  const token = await issued();
  const instance = gate();
  expect((await instance.admit(token, now)).kind).toBe('admitted');
  expect(await accounts.revokeToken(token.accountId, token.tokenId, new Date(now).toISOString())).toBe(true);
  const verdict = await gate().admit(token, now);
  expect(verdict).toMatchObject({ kind: 'refused', record: { revokedAt: new Date(now).toISOString() } });
  expect(await accounts.revokeToken(token.accountId, `${token.accountId}_nosuchtk`, new Date(now).toISOString())).toBe(
    false,
  );
  expect(await gateItem(`${token.accountId}_nosuchtk`)).toBeUndefined();
});

test("a token's budget flag follows its budget, in the same transaction; a requester budget leaves gates alone", async () => {
  const token = await issued();
  const subject = { kind: 'token' as const, tokenId: token.tokenId };
  await budgets.setBudget(token.accountId, subject, { limitNanos: 1e9, period: 'month' }, 'x');
  expect(await gate().admit(token, now)).toMatchObject({ kind: 'admitted', tokenBudget: true });
  expect(await budgets.removeBudget(token.accountId, subject)).toBe(true);
  expect(await gate().admit(token, now)).toMatchObject({ kind: 'admitted', tokenBudget: false });
  expect(await budgets.removeBudget(token.accountId, subject)).toBe(false);
  await budgets.setBudget(
    token.accountId,
    { kind: 'requester', requester: 'alice' },
    { limitNanos: 1e9, period: 'day' },
    'x',
  );
  expect(await gate().admit(token, now)).toMatchObject({ kind: 'admitted', tokenBudget: false });
});

describe('a token with no gate yet (issued before gates, or the table was recreated)', () => {
  async function withoutGate(revoked = false, budget = false): Promise<ParsedToken> {
    const token = await issued();
    await tables.clients.doc.send({
      operation: 'DeleteItem',
      input: { TableName: tables.tables.rateLimits, Key: gateKey(token.tokenId) },
    });
    if (budget) {
      // Written as before gates existed: the budget item alone.
      await tables.clients.doc.send({
        operation: 'PutItem',
        input: {
          TableName: tables.tables.accounts,
          Item: {
            pk: `${accountPk(token.accountId)}#T#${token.tokenId}`,
            sk: 'BUDGET',
            limit_nanos: 1e9,
            period: 'month',
          },
        },
      });
    }
    if (revoked) await accounts.revokeToken(token.accountId, token.tokenId, new Date(now).toISOString());
    return token;
  }

  test('gets one built from its token item on first use, then costs one call like any other', async () => {
    const token = await withoutGate(false, true);
    const sent: string[] = [];
    const instance = gate(sent);
    expect(await instance.admit(token, now)).toMatchObject({
      kind: 'admitted',
      tokenBudget: true,
      rateLimit: { remaining: LIMIT - 1 },
    });
    // Counted (no gate), built (after the source's reads of the token and its budget), counted again.
    expect(sent).toEqual(['UpdateItem', 'UpdateItem', 'UpdateItem']);
    sent.length = 0;
    expect(await instance.admit(token, now)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: LIMIT - 2 } });
    expect(sent).toEqual(['UpdateItem']);
  });

  test('revoked meanwhile: the revocation is kept when the rest is built', async () => {
    const token = await withoutGate(true);
    expect(await gateItem(token.tokenId)).toEqual({
      ...gateKey(token.tokenId),
      revoked_at: new Date(now).toISOString(),
    });
    expect(await gate().admit(token, now)).toMatchObject({
      kind: 'refused',
      record: { revokedAt: new Date(now).toISOString() },
    });
    expect(await gateItem(token.tokenId)).toMatchObject({
      secret_hash: hashSecret(token.secret),
      revoked_at: new Date(now).toISOString(),
    });
  });

  test('first used on two instances at once: both build it, the second build yields to the first, both requests count', async () => {
    const token = await withoutGate();
    const verdicts = await Promise.all([gate().admit(token, now), gate().admit(token, now)]);
    expect(verdicts.map((verdict) => verdict.kind)).toEqual(['admitted', 'admitted']);
    const remaining = verdicts.map((verdict) => (verdict.kind === 'admitted' ? verdict.rateLimit?.remaining : -1));
    expect(remaining.sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([LIMIT - 2, LIMIT - 1]);
    expect(await gateItem(token.tokenId)).toMatchObject({ secret_hash: hashSecret(token.secret) });
  });

  test('an unknown token is refused and leaves no item behind', async () => {
    const unknown = newToken(newAccountId()).parsed;
    expect(await gate().admit(unknown, now)).toEqual({ kind: 'refused' });
    expect(await gateItem(unknown.tokenId)).toBeUndefined();
  });
});

test('the gate item is bounded by construction: whatever the instances, buckets and pauses, it holds its ring and a few counters', async () => {
  const token = await issued();
  const instances = Array.from({ length: 12 }, () => gate());
  const random = seededRandom(12);
  let at = now;
  for (let i = 0; i < 120; i++) {
    at += random() < 0.2 ? Math.floor(random() * 3 * MINUTE) : Math.floor(random() * 2_000);
    await instances[Math.floor(random() * instances.length)]!.admit(token, at);
  }
  const item = (await gateItem(token.tokenId))!;
  const counters = Object.keys(item).filter((name) => !COPY.has(name));
  expect(counters.every((name) => /^(n|m|m_limit|b|z|r\d+)$/.test(name))).toBe(true);
  expect(counters.filter((name) => /^r\d+$/.test(name)).length).toBeLessThanOrEqual(RING_SLOTS);
  expect(Object.keys(item).length).toBeLessThanOrEqual(COPY.size + 5 + RING_SLOTS);
});

test('"last used" is written by the gate call itself, for admitted requests only, and listed with the token', async () => {
  const token = await issued();
  const instance = gate();
  const listed = async () => (await accounts.listTokens(token.accountId)).find((t) => t.tokenId === token.tokenId)!;
  expect((await listed()).lastUsedAt).toBeUndefined();
  await instance.admit(token, now + 2_000);
  expect((await listed()).lastUsedAt).toBe(new Date(now + 2_000).toISOString());
  await instance.admit({ ...token, secret: newToken(token.accountId).parsed.secret }, now + 3_000);
  expect((await listed()).lastUsedAt).toBe(new Date(now + 2_000).toISOString());
});

describe('a token whose limit spreads its gate over several items (60,000 a minute: 4)', () => {
  const BUSY = 60_000;
  async function busyToken(): Promise<{ token: ParsedToken; busyAccounts: DynamoAccountStore }> {
    const busyAccounts = new DynamoAccountStore(
      tables.clients.doc,
      tables.tables.accounts,
      tables.tables.rateLimits,
      undefined,
      undefined,
      BUSY,
    );
    const accountId = newAccountId();
    await busyAccounts.createAccount({ accountId, createdAt: new Date(now).toISOString() });
    const { token } = await issueToken(busyAccounts, { accountId, scopes: ['proxy'], now: new Date(now) });
    return { token: parseToken(token)!, busyAccounts };
  }
  const busyGate = (sent: string[] = []) => {
    const instance = new DynamoTokenGate(countingClient(sent), tables.tables.rateLimits, BUSY, source);
    return (token: ParsedToken, at: number) =>
      instance.admit({ accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) }, at);
  };

  test('all its items are written when it is issued: any first request, on any instance, is one call', async () => {
    const { token } = await busyToken();
    const items = await Promise.all(
      [0, 1, 2, 3].map(async (shard) => {
        const { Item } = await tables.clients.doc.send({
          operation: 'GetItem',
          input: { TableName: tables.tables.rateLimits, Key: gateKey(token.tokenId, shard), ConsistentRead: true },
        });
        return Item;
      }),
    );
    expect(items.map((item) => [item?.secret_hash, item?.m_limit])).toEqual(
      Array(4).fill([hashSecret(token.secret), 15_000]),
    );
    const sent: string[] = [];
    for (let i = 0; i < 12; i++) expect((await busyGate(sent)(token, now + i)).kind).toBe('admitted');
    expect(sent).toEqual(Array(12).fill('UpdateItem'));
  });

  test('a revocation reaches every item: no request of the token passes afterwards, whichever item it asks', async () => {
    const { token, busyAccounts } = await busyToken();
    expect((await busyGate()(token, now)).kind).toBe('admitted');
    expect(await busyAccounts.revokeToken(token.accountId, token.tokenId, new Date(now).toISOString())).toBe(true);
    for (let i = 0; i < 24; i++) expect((await busyGate()(token, now + i)).kind).toBe('refused');
  });
});
