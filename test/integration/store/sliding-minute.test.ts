/**
 * The rate limit is a sliding minute (docs/errors-and-limits.md, "The rate limit"), checked on
 * DynamoDB Local with an injected clock: no 60-second span admits more than the limit, a token
 * that stays under it is never refused, across a clock-minute boundary and across instances; the
 * `x-ratelimit-*` figures are those of the window; one UpdateItem per request once an instance
 * has seen the token's previous minute.
 */
import { hashSecret, newAccountId, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoTokenGate, type GateSource } from '../../../lambda/auth/dynamodb/token-gate';
import type { GateVerdict } from '../../../lambda/auth/ports';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { seededRandom } from '../../fakes/behaviour';
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

function gate(limit: number): Gate {
  const calls: string[] = [];
  const doc = tables.clients.doc;
  const counting: DocumentClient = {
    send: ((command: StoreCommand) => (
      calls.push(command.operation),
      doc.send(command as never)
    )) as DocumentClient['send'],
  };
  const instance = new DynamoTokenGate(counting, tables.tables.rateLimits, limit, source);
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

/** The exact rule, written out: admitted when fewer than `limit` admissions lie in the 60 s before. */
function reference(limit: number) {
  const admitted: number[] = [];
  return (at: number) => {
    const inWindow = admitted.filter((time) => time > at - MINUTE);
    const ok = inWindow.length < limit;
    if (ok) admitted.push(at);
    return { ok, remaining: Math.max(0, limit - inWindow.length - (ok ? 1 : 0)) };
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

test('100 requests at :57 and 100 more at :01 of the next minute: the second hundred is refused, until the first leaves the window', async () => {
  const token = await issued();
  const instance = gate(100);
  const at57 = MINUTE_START + 57_000;
  for (let i = 0; i < 100; i++)
    expect(await instance.admit(token, at57 + i)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 99 - i } });
  const at01 = MINUTE_START + MINUTE + 1_000;
  for (let i = 0; i < 100; i++) {
    expect(await instance.admit(token, at01 + i)).toMatchObject({
      kind: 'limited',
      rateLimit: { allowed: false, remaining: 0, resetAt: (at57 + MINUTE) / 1000 },
    });
  }
  // 60 s after the first of them, exactly one has left the window: one more is admitted, the next is not.
  expect(await instance.admit(token, at57 + MINUTE)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 0 } });
  expect((await instance.admit(token, at57 + MINUTE)).kind).toBe('limited');
});

test('a token that never sends more than the limit in 60 s is never refused, across minute boundaries', async () => {
  const token = await issued();
  const instance = gate(100);
  // 100 requests per minute, evenly spread, for three minutes, starting mid-minute.
  for (let i = 0; i < 300; i++) {
    const verdict = await instance.admit(token, MINUTE_START + 30_000 + i * 600);
    expect(verdict.kind).toBe('admitted');
  }
});

test('random bursts over five minutes through two instances: every decision and remaining count is the exact rule’s', async () => {
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
  expect(busiestMinute(admittedTimes)).toBe(limit);
  expect(at - MINUTE_START).toBeGreaterThan(4 * MINUTE);
});

test('one conditional write per request once an instance has seen the token’s previous minute', async () => {
  const token = await issued();
  const instance = gate(10);
  for (let i = 0; i < 5; i++) await instance.admit(token, MINUTE_START + 40_000 + i * 1_000);
  await instance.admit(token, MINUTE_START + MINUTE + 1_000);
  instance.calls.length = 0;
  for (let i = 0; i < 8; i++) await instance.admit(token, MINUTE_START + MINUTE + 2_000 + i * 100);
  expect(instance.calls).toEqual(Array(8).fill('UpdateItem'));
});

test('a limit of 1 admits one request per 60 s (its condition has a single clause)', async () => {
  const token = await issued();
  const instance = gate(1);
  const at = MINUTE_START + 59_000;
  expect(await instance.admit(token, at)).toMatchObject({ kind: 'admitted', rateLimit: { remaining: 0 } });
  expect((await instance.admit(token, at + 2_000)).kind).toBe('limited');
  // A fresh instance has no copy of the previous minute: the single-clause condition is the one it sends.
  expect((await gate(1).admit(token, at + 30_000)).kind).toBe('limited');
  expect((await gate(1).admit(token, at + MINUTE)).kind).toBe('admitted');
});
