import type { GateVerdict, PresentedToken, RateLimitDecision, Scope, TokenGate, TokenRecord } from '../ports';
import { conditionFailedItem } from '../../store/dynamodb/wire/dynamo-error';
import type { DocumentClient } from '../../store/dynamodb/wire/document-client';

const WINDOW_SECONDS = 60;
const STALE_MEMO_MAX = 10_000;

/**
 * One gate item per proxy token in the rate-limits table: the token's per-minute request counts
 * (`w<window start>`) beside a copy of what authentication needs (account, secret hash, scopes,
 * revocation), whether the token has a budget, and when it last passed (`last_used_at`, shown on
 * the dashboard). A proxied request is then one conditional
 * UpdateItem: it counts only a token that is real, unrevoked and under its limit, and returns
 * the copy either way (`ALL_NEW`, or `ALL_OLD` when the condition fails).
 *
 * The accounts table stays the source of truth. Every change to what the copy holds writes both
 * items in one transaction (account-store.ts, budget-store.ts), and a token with no gate yet
 * (issued before gates existed, or the table was recreated) gets one built from its token item
 * on first use.
 */
export const gateKey = (tokenId: string) => ({ counter_key: `TOKEN#${tokenId}` });

const windowAttribute = (windowStart: number) => `w${windowStart}`;
const WINDOW_ATTRIBUTE = /^w\d+$/;

/** What a gate copies of its token (revocation and the budget flag are kept apart: they change later). */
function copyOf(record: TokenRecord): Record<string, unknown> {
  return { account_id: record.accountId, token_id: record.tokenId, secret_hash: record.secretHash, scopes: record.scopes, created_at: record.createdAt };
}

/** The gate item of a new token, written in the token's own transaction. */
export function gateOfNewToken(record: TokenRecord): Record<string, unknown> {
  return { ...gateKey(record.tokenId), ...copyOf(record), token_budget: false };
}

/** The gate's half of a revocation; on a token with no gate yet it leaves a stub that first use completes. */
export function gateRevocation(table: string, tokenId: string, revokedAt: string) {
  return {
    TableName: table,
    Key: gateKey(tokenId),
    UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :at)',
    ExpressionAttributeValues: { ':at': revokedAt },
  };
}

/** The gate's half of setting or removing a token's budget. */
export function gateBudgetFlag(table: string, tokenId: string, hasBudget: boolean) {
  return { TableName: table, Key: gateKey(tokenId), UpdateExpression: 'SET token_budget = :flag', ExpressionAttributeValues: { ':flag': hasBudget } };
}

function recordOf(item: Record<string, unknown>): TokenRecord {
  return {
    accountId: String(item.account_id),
    tokenId: String(item.token_id),
    scopes: (item.scopes as Scope[] | undefined) ?? [],
    secretHash: String(item.secret_hash),
    createdAt: String(item.created_at),
    revokedAt: typeof item.revoked_at === 'string' ? item.revoked_at : undefined,
  };
}

/** Where a token with no gate is looked up (its token item and whether it has a budget). */
export type GateSource = (token: PresentedToken, now: number) => Promise<{ record: TokenRecord; tokenBudget: boolean } | undefined>;

export class DynamoTokenGate implements TokenGate {
  /** Per token, the window attributes an earlier answer showed to be over: the next request removes them. */
  private readonly staleWindows = new Map<string, string[]>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly limit: number,
    private readonly source: GateSource,
  ) {}

  async admit(token: PresentedToken, now: number): Promise<GateVerdict> {
    const first = await this.count(token, now);
    if (first !== 'no gate') return first;
    const found = await this.source(token, now);
    if (!found) return { kind: 'refused' };
    await this.build(found.record, found.tokenBudget);
    const second = await this.count(token, now);
    return second === 'no gate' ? { kind: 'refused' } : second;
  }

  private async count(token: PresentedToken, now: number): Promise<GateVerdict | 'no gate'> {
    const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
    const decision = (remaining: number): RateLimitDecision => ({ allowed: remaining >= 0, limit: this.limit, remaining: Math.max(0, remaining), resetAt: windowStart + WINDOW_SECONDS });
    const current = windowAttribute(windowStart);
    const over = [windowAttribute(windowStart - WINDOW_SECONDS), ...(this.staleWindows.get(token.tokenId) ?? [])].filter((name) => name !== current);
    const names: Record<string, string> = { '#now': current };
    over.forEach((name, i) => (names[`#old${i}`] = name));
    try {
      const { Attributes } = await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(token.tokenId),
          UpdateExpression: `SET last_used_at = :used ADD #now :one REMOVE ${over.map((_, i) => `#old${i}`).join(', ')}`,
          // Only a real, unrevoked token under its limit is counted: a forged or revoked one uses up nothing.
          ConditionExpression: 'secret_hash = :hash AND attribute_not_exists(revoked_at) AND (attribute_not_exists(#now) OR #now < :limit)',
          ExpressionAttributeNames: names,
          // A refused request changes nothing, "last used" included.
          ExpressionAttributeValues: { ':one': 1, ':limit': this.limit, ':hash': token.secretHash, ':used': new Date(now).toISOString() },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
      const item = Attributes ?? {};
      this.noteStale(token.tokenId, item, current);
      return { kind: 'admitted', record: recordOf(item), rateLimit: decision(this.limit - Number(item[current])), tokenBudget: item.token_budget === true };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const old = conditionFailedItem(error);
      if (!old || typeof old.secret_hash !== 'string') return 'no gate';
      const record = recordOf(old);
      if (record.revokedAt || old.secret_hash !== token.secretHash) return { kind: 'refused', record };
      return { kind: 'limited', record, rateLimit: decision(-1), tokenBudget: old.token_budget === true };
    }
  }

  /** Fills in a missing gate from the token item; a revocation or budget flag already there is kept. */
  private async build(record: TokenRecord, tokenBudget: boolean): Promise<void> {
    const values: Record<string, unknown> = { ':budget': tokenBudget };
    const sets = Object.entries(copyOf(record)).map(([name, value]) => {
      values[`:${name}`] = value;
      return `${name} = :${name}`;
    });
    sets.push('token_budget = if_not_exists(token_budget, :budget)');
    if (record.revokedAt) {
      values[':revoked'] = record.revokedAt;
      sets.push('revoked_at = if_not_exists(revoked_at, :revoked)');
    }
    await this.doc
      .send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(record.tokenId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          // Another instance may have built it meanwhile; theirs is as good.
          ConditionExpression: 'attribute_not_exists(secret_hash)',
          ExpressionAttributeValues: values,
        },
      })
      .catch((error: Error) => {
        if (error.name !== 'ConditionalCheckFailedException') throw error;
      });
  }

  /** Window attributes left from a minute the token was idle after; bounded, as the item's size stays. */
  private noteStale(tokenId: string, item: Record<string, unknown>, current: string): void {
    const stale = Object.keys(item).filter((name) => WINDOW_ATTRIBUTE.test(name) && name !== current);
    if (stale.length === 0) {
      this.staleWindows.delete(tokenId);
      return;
    }
    if (this.staleWindows.size >= STALE_MEMO_MAX) this.staleWindows.clear();
    this.staleWindows.set(tokenId, stale);
  }
}
