import { randomBytes } from 'node:crypto';
import { tagsFrom } from '../../tags/tags';
import type {
  GateVerdict,
  PresentedToken,
  RateLimitDecision,
  Scope,
  TokenGate,
  TokenLimits,
  TokenRecord,
  TokenUpdate,
} from '../ports';
import {
  entryFor,
  inWindow,
  minuteAttribute,
  minuteStartOf,
  roomCondition,
  timesIn,
  WINDOW_ATTRIBUTE,
  WINDOW_MS,
  windowFigures,
} from '../sliding-minute';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

const MEMO_MAX = 10_000;

/**
 * One gate item per proxy token in the rate-limits table: the token's admission times of the
 * current and the previous clock minute (`a<minute start>`, sliding-minute.ts) beside a copy of what authentication needs (account, secret hash, scopes,
 * revocation), the token's own tags and limits (docs/tags.md), whether the token has a budget, and
 * when it last passed (`last_used_at`, shown on the dashboard). A proxied request is then one conditional
 * UpdateItem: it counts only a token that is real, unrevoked and under its limit, and returns
 * the copy either way (`ALL_NEW`, or `ALL_OLD` when the condition fails).
 *
 * The accounts table stays the source of truth. Every change to what the copy holds writes both
 * items in one transaction (account-store.ts, budget-store.ts), and a token with no gate yet
 * (issued before gates existed, or the table was recreated) gets one built from its token item
 * on first use.
 */
export const gateKey = (tokenId: string) => ({ counter_key: `TOKEN#${tokenId}` });

/** What a gate copies of its token (revocation and the budget flag are kept apart: they change later). */
function copyOf(record: TokenRecord): Record<string, unknown> {
  return {
    account_id: record.accountId,
    token_id: record.tokenId,
    secret_hash: record.secretHash,
    scopes: record.scopes,
    created_at: record.createdAt,
    ...settingsOf(record),
  };
}

/** Limits as the token item and its gate store them (absent attributes mean no limit; the API checked their ranges). */
export function limitsFrom(item: Record<string, unknown>): TokenLimits {
  const limits: TokenLimits = {};
  const rpm = item.requests_per_minute;
  if (typeof rpm === 'number' && Number.isInteger(rpm) && rpm >= 1) limits.requestsPerMinute = rpm;
  const models = item.models;
  if (Array.isArray(models) && models.length > 0 && models.every((entry) => typeof entry === 'string'))
    limits.models = models;
  return limits;
}

/** The token's tags and limits as both its token item and its gate hold them; an absent one is no setting. */
export function settingsOf(record: Pick<TokenRecord, 'tags' | 'limits'>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  if (record.tags && Object.keys(record.tags).length) settings.tags = record.tags;
  if (record.limits?.requestsPerMinute !== undefined) settings.requests_per_minute = record.limits.requestsPerMinute;
  if (record.limits?.models) settings.models = record.limits.models;
  return settings;
}

/** The attributes one token update sets (present) or removes (absent). */
const UPDATED: Record<'tags' | 'limits', string[]> = { tags: ['tags'], limits: ['requests_per_minute', 'models'] };

/** The update expression of a token setting change, the same on the token item and on its gate. */
export function settingsUpdate(update: TokenUpdate): {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  const settings = settingsOf('tags' in update ? { tags: update.tags } : { limits: update.limits });
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  UPDATED['tags' in update ? 'tags' : 'limits'].forEach((attribute, i) => {
    names[`#s${i}`] = attribute;
    if (settings[attribute] === undefined) removes.push(`#s${i}`);
    else {
      values[`:s${i}`] = settings[attribute];
      sets.push(`#s${i} = :s${i}`);
    }
  });
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  return {
    UpdateExpression: expression,
    ExpressionAttributeNames: names,
    ...(sets.length ? { ExpressionAttributeValues: values } : {}),
  };
}

/** The gate's half of a change to the token's tags or limits; on a token with no gate yet it leaves a stub that first use completes. */
export function gateSettings(table: string, tokenId: string, update: TokenUpdate) {
  return { TableName: table, Key: gateKey(tokenId), ...settingsUpdate(update) };
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
  return {
    TableName: table,
    Key: gateKey(tokenId),
    UpdateExpression: 'SET token_budget = :flag',
    ExpressionAttributeValues: { ':flag': hasBudget },
  };
}

function recordOf(item: Record<string, unknown>): TokenRecord {
  return {
    accountId: String(item.account_id),
    tokenId: String(item.token_id),
    scopes: (item.scopes as Scope[] | undefined) ?? [],
    secretHash: String(item.secret_hash),
    createdAt: String(item.created_at),
    revokedAt: typeof item.revoked_at === 'string' ? item.revoked_at : undefined,
    tags: tagsFrom(item.tags),
    limits: limitsFrom(item),
  };
}

/** Where a token with no gate is looked up (its token item and whether it has a budget). */
export type GateSource = (
  token: PresentedToken,
  now: number,
) => Promise<{ record: TokenRecord; tokenBudget: boolean } | undefined>;

/** The admission times of a token's previous minute, copied once that minute was over (it no longer changes). */
interface PreviousMinute {
  minuteStart: number;
  times: number[];
}

export class DynamoTokenGate implements TokenGate {
  /** Per token, the window attributes an earlier answer showed to be over: the next request removes them. */
  private readonly staleWindows = new Map<string, string[]>();
  /** Per token, its previous minute's admission times, so one condition can admit exactly. */
  private readonly previousMinutes = new Map<string, PreviousMinute>();
  /** Per token, its own requests per minute as last seen (absent: the default), which the condition assumes and checks. */
  private readonly tokenLimits = new Map<string, number | undefined>();

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

  /**
   * `attempt` counts the calls of this request: a second one follows a refusal the returned item
   * shows to be wrong (no copy of the previous minute, or a token limit other than the one assumed).
   */
  private async count(token: PresentedToken, now: number, attempt = 1): Promise<GateVerdict | 'no gate'> {
    const minuteStart = minuteStartOf(now);
    const current = minuteAttribute(minuteStart);
    const previous = minuteAttribute(minuteStart - WINDOW_MS);
    const copy = this.previousMinutes.get(token.tokenId);
    const known = copy?.minuteStart === minuteStart - WINDOW_MS ? inWindow(copy.times, now).length : undefined;
    // The token's own limit (docs/tags.md) is assumed from the last answer and checked by the condition
    // itself, so a changed limit is never applied late: the refusal returns the new one, and the call is made again.
    const assumed = this.tokenLimits.get(token.tokenId);
    const limit = assumed ?? this.limit;
    const room = roomCondition(limit, known);
    const limitGuard =
      assumed === undefined ? 'attribute_not_exists(requests_per_minute)' : 'requests_per_minute = :tokenLimit';
    const over = (this.staleWindows.get(token.tokenId) ?? []).filter((name) => name !== current && name !== previous);
    const names: Record<string, string> = room.readsPrevious
      ? { '#cur': current, '#prev': previous }
      : { '#cur': current };
    over.forEach((name, i) => (names[`#old${i}`] = name));
    try {
      const { Attributes } = await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(token.tokenId),
          UpdateExpression: `SET last_used_at = :used ADD #cur :entry${over.length ? ` REMOVE ${over.map((_, i) => `#old${i}`).join(', ')}` : ''}`,
          // Only a real, unrevoked token under its limit is counted: a forged or revoked one uses up nothing.
          ConditionExpression: `secret_hash = :hash AND attribute_not_exists(revoked_at) AND ${limitGuard} AND ${room.expression}`,
          ExpressionAttributeNames: names,
          // A refused request changes nothing, "last used" included.
          ExpressionAttributeValues: {
            ...room.values,
            ...(assumed === undefined ? {} : { ':tokenLimit': assumed }),
            ':entry': new Set([entryFor(now, randomBytes(3).toString('base64url'))]),
            ':hash': token.secretHash,
            ':used': new Date(now).toISOString(),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
      const item = Attributes ?? {};
      const counted = this.remember(token.tokenId, item, minuteStart, now);
      return {
        kind: 'admitted',
        record: recordOf(item),
        rateLimit: this.decision(limit, true, counted, now),
        tokenBudget: item.token_budget === true,
      };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const old = conditionFailedItem(error);
      if (!old || typeof old.secret_hash !== 'string') return 'no gate';
      const record = recordOf(old);
      if (record.revokedAt || old.secret_hash !== token.secretHash) return { kind: 'refused', record };
      const counted = this.remember(token.tokenId, old, minuteStart, now);
      const actual = record.limits?.requestsPerMinute ?? this.limit;
      // Refused on an assumption the item proves wrong (no copy of the previous minute, or another
      // token limit), though under the limit: ask again, now exactly.
      if (counted.length < actual && attempt < 3) return this.count(token, now, attempt + 1);
      return {
        kind: 'limited',
        record,
        rateLimit: this.decision(actual, false, counted, now),
        tokenBudget: old.token_budget === true,
      };
    }
  }

  private decision(limit: number, allowed: boolean, counted: readonly number[], now: number): RateLimitDecision {
    const figures = windowFigures(limit, counted, now);
    // A refused request had no room, whatever a concurrent change to the item shows by now.
    return { allowed, limit, ...figures, remaining: allowed ? figures.remaining : 0 };
  }

  /**
   * Notes what an answer showed: the previous minute's times (complete: that minute is over) and
   * window attributes from minutes before it. Returns the admission times inside the window.
   */
  private remember(tokenId: string, item: Record<string, unknown>, minuteStart: number, now: number): number[] {
    if (this.previousMinutes.size >= MEMO_MAX) this.previousMinutes.clear();
    if (this.tokenLimits.size >= MEMO_MAX) this.tokenLimits.clear();
    this.tokenLimits.set(tokenId, limitsFrom(item).requestsPerMinute);
    const previousTimes = timesIn(item[minuteAttribute(minuteStart - WINDOW_MS)], minuteStart - WINDOW_MS);
    this.previousMinutes.set(tokenId, { minuteStart: minuteStart - WINDOW_MS, times: previousTimes });
    const keep = new Set([minuteAttribute(minuteStart), minuteAttribute(minuteStart - WINDOW_MS)]);
    this.noteStale(tokenId, item, keep);
    return inWindow([...previousTimes, ...timesIn(item[minuteAttribute(minuteStart)], minuteStart)], now);
  }

  /** Fills in a missing gate from the token item; a revocation or budget flag already there is kept. */
  private async build(record: TokenRecord, tokenBudget: boolean): Promise<void> {
    const values: Record<string, unknown> = { ':budget': tokenBudget };
    const names: Record<string, string> = {};
    const sets = Object.entries(copyOf(record)).map(([name, value]) => {
      names[`#${name}`] = name;
      values[`:${name}`] = value;
      return `#${name} = :${name}`;
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
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      })
      .catch((error: Error) => {
        if (error.name !== 'ConditionalCheckFailedException') throw error;
      });
  }

  /** Window attributes of minutes before the previous one: the next request removes them, so the item's size stays bounded. */
  private noteStale(tokenId: string, item: Record<string, unknown>, keep: ReadonlySet<string>): void {
    const stale = Object.keys(item).filter((name) => WINDOW_ATTRIBUTE.test(name) && !keep.has(name));
    if (stale.length === 0) {
      this.staleWindows.delete(tokenId);
      return;
    }
    if (this.staleWindows.size >= MEMO_MAX) this.staleWindows.clear();
    this.staleWindows.set(tokenId, stale);
  }
}
