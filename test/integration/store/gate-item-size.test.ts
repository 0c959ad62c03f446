/**
 * The token gate's item, written by every proxied request, holds the token's admission times of
 * the current and the previous clock minute (lambda/auth/sliding-minute.ts). DynamoDB bills a
 * write by the larger of the item's sizes before and after it, one write unit per started KB, so
 * the gate's write grows with the token's rate. Measured here on DynamoDB Local, whose consumed
 * capacity is DynamoDB's billing rule: a token sending at its limit, steadily, for two minutes,
 * at the default limit and at the highest per-token limit. lib/cost-model.ts states the same
 * figures (docs/deploy.md renders them), so a change to the item's layout that moves them fails here.
 */
import { hashSecret, newAccountId, parseToken, type ParsedToken } from '../../../lambda/auth/proxy-token';
import { issueToken } from '../../../lambda/auth/issue';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoTokenGate } from '../../../lambda/auth/dynamodb/token-gate';
import { gateKey, type GateSource } from '../../../lambda/auth/dynamodb/gate-item';
import { entryFor, minuteAttribute } from '../../../lambda/auth/sliding-minute';
import { MAX_REQUESTS_PER_MINUTE } from '../../../lambda/auth/token-limits';
import type { DocumentClient } from '../../../lambda/store/dynamodb/wire/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/wire/operations';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { gateItemBytes, gateWriteUnits } from '../../../lib/cost-model';
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

/** Request `i` of a token sending `limit` a minute, evenly, from the start of the previous minute. */
const steadyAt = (limit: number, i: number) => MINUTE_START - MINUTE + Math.floor((i * MINUTE) / limit) + 1;

for (const limit of [DEFAULTS.rateLimitPerMinute, MAX_REQUESTS_PER_MINUTE]) {
  test(`a token at ${limit} a minute: its gate item and the units of its write`, async () => {
    const token = await issued(limit === DEFAULTS.rateLimitPerMinute ? undefined : limit);
    const gate = measuredGate(DEFAULTS.rateLimitPerMinute);
    const first = await gate.admit(token, steadyAt(limit, 0));
    expect(first.kind).toBe('admitted');
    // The rest of two minutes at the limit but the last request, written in the gate's own layout (a
    // set per clock minute, one entry per admission); then the last request through the gate.
    for (const minute of [0, 1]) {
      const times = Array.from({ length: limit }, (_, i) => steadyAt(limit, minute * limit + i)).filter(
        (_, i) => !(minute === 0 && i === 0) && !(minute === 1 && i === limit - 1),
      );
      for (let at = 0; at < times.length; at += 2_000) {
        const entries = new Set(
          times.slice(at, at + 2_000).map((time) => entryFor(time, randomBytes(3).toString('base64url'))),
        );
        await tables.clients.doc.send({
          operation: 'UpdateItem',
          input: {
            TableName: tables.tables.rateLimits,
            Key: gateKey(token.tokenId),
            UpdateExpression: 'ADD #m :e',
            ExpressionAttributeNames: { '#m': minuteAttribute(MINUTE_START - MINUTE + minute * MINUTE) },
            ExpressionAttributeValues: { ':e': entries },
          },
        });
      }
    }
    const last = await gate.admit(token, steadyAt(limit, 2 * limit - 1));
    expect(last.kind).toBe('admitted');
    const { Item } = await tables.clients.doc.send({
      operation: 'GetItem',
      input: { TableName: tables.tables.rateLimits, Key: gateKey(token.tokenId), ConsistentRead: true },
    });
    expect((Item?.[minuteAttribute(MINUTE_START - MINUTE)] as Set<string>).size).toBe(limit);
    expect((Item?.[minuteAttribute(MINUTE_START)] as Set<string>).size).toBe(limit);

    // The item's size by DynamoDB's rules, and the units DynamoDB charged for the last request's write.
    const { Item: wire } = await tables.clients.raw.send(
      new GetItemCommand({
        TableName: tables.tables.rateLimits,
        Key: { counter_key: { S: gateKey(token.tokenId).counter_key } },
        ConsistentRead: true,
      }),
    );
    const bytes = itemSize(wire as Record<string, unknown>);
    const charged = gate.units[gate.units.length - 1];
    // lib/cost-model.ts states both (docs/deploy.md renders them): within 1% and one unit.
    expect(Math.abs(gateItemBytes(limit) - bytes)).toBeLessThanOrEqual(bytes / 100);
    expect(Math.abs(gateWriteUnits(limit) - charged)).toBeLessThanOrEqual(1);
    // Past 1 KB already at the default limit: the gate's write is more than the one unit a small item costs.
    expect(charged).toBeGreaterThan(1);
  });
}
