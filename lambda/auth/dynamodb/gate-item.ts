import { tagsFrom } from '../../tags/tags';
import type { FallbackDefaults, PresentedToken, Scope, TokenLimits, TokenRecord, TokenUpdate } from '../ports';
import { MAX_GATE_SHARDS, shardCount, shareOf } from '../sliding-minute';
import { freshRing } from './gate-count';

/**
 * A proxy token's gate: one item in the rate-limits table per shard (sliding-minute.ts; one shard
 * unless the token's limit is high), each holding a copy of what authentication needs (account,
 * secret hash, scopes, revocation), the token's own tags and limits (docs/tags.md), whether the
 * token has a budget, when it last passed (`last_used_at`), and the rate counters of its share of
 * the limit: `n`, `m`, `m_limit`, `b`, `z` and the ring `r0` … (sliding-minute.ts). Its size does not depend on
 * the traffic: a few hundred bytes, one write unit.
 *
 * The accounts table stays the source of truth. Every change to what the copy holds writes the
 * token item and every shard at once, in one transaction (account-store.ts, budget-store.ts); a
 * shard that does not exist yet gets a stub, which first use completes from the token item.
 */
export const gateKey = (tokenId: string, shard = 0) => ({
  counter_key: shard === 0 ? `TOKEN#${tokenId}` : `TOKEN#${tokenId}#${shard}`,
});

/** Every shard a token's gate may have, whatever its limit (a change must reach all of them). */
const everyShard = (tokenId: string) => Array.from({ length: MAX_GATE_SHARDS }, (_, shard) => gateKey(tokenId, shard));

/** What a gate copies of its token (revocation and the budget flag are kept apart: they change later). */
export function copyOf(record: TokenRecord): Record<string, unknown> {
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

/** Default fallbacks as the token item and its gate store them (the API checked them). */
export function fallbacksFrom(item: Record<string, unknown>): FallbackDefaults | undefined {
  const map = item.fallbacks;
  if (!map || typeof map !== 'object' || Array.isArray(map)) return undefined;
  const entries = Object.entries(map).filter(
    (entry): entry is [string, string[]] =>
      Array.isArray(entry[1]) && entry[1].every((fallback) => typeof fallback === 'string'),
  );
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/** The token's tags, limits and default fallbacks as both its token item and its gate hold them; an absent one is no setting. */
export function settingsOf(record: Pick<TokenRecord, 'tags' | 'limits' | 'fallbacks'>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  if (record.tags && Object.keys(record.tags).length) settings.tags = record.tags;
  if (record.limits?.requestsPerMinute !== undefined) settings.requests_per_minute = record.limits.requestsPerMinute;
  if (record.limits?.models) settings.models = record.limits.models;
  if (record.fallbacks && Object.keys(record.fallbacks).length) settings.fallbacks = record.fallbacks;
  return settings;
}

type UpdateKind = 'tags' | 'limits' | 'fallbacks';
const kindOf = (update: TokenUpdate): UpdateKind =>
  'tags' in update ? 'tags' : 'limits' in update ? 'limits' : 'fallbacks';

/** The attributes one token update sets (present) or removes (absent). */
const UPDATED: Record<UpdateKind, string[]> = {
  tags: ['tags'],
  limits: ['requests_per_minute', 'models'],
  fallbacks: ['fallbacks'],
};

/**
 * The update expression of a token setting change, the same on the token item and on its gate;
 * `gate` adds, for a change of limits, the removal of the limit the gate's counters were set for,
 * so the next request sets them for the new one (token-gate.ts).
 */
export function settingsUpdate(
  update: TokenUpdate,
  gate = false,
): {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  const settings = settingsOf(update);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = gate && 'limits' in update ? ['m_limit'] : [];
  UPDATED[kindOf(update)].forEach((attribute, i) => {
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

/** The gate's half of a change to the token's tags or limits, on every shard. */
export function gateSettings(table: string, tokenId: string, update: TokenUpdate) {
  return everyShard(tokenId).map((Key) => ({ TableName: table, Key, ...settingsUpdate(update, true) }));
}

/** The rate counters of a shard that has counted nothing yet, set up at `now`, for its share of `limit`. */
export function freshCounters(limit: number, shard: number, now: number, perShard?: number): Record<string, unknown> {
  const share = shareOf(limit, shardCount(limit, perShard), shard);
  return { n: 0, m: -share, m_limit: share, ...freshRing(now) };
}

/**
 * The gate items of a new token, every shard its limit gives it, written in the token's own
 * transaction. With the proxy's default limit known, their counters are ready for the first
 * request; without it, the first request on each sets them (a second store call, once).
 */
export function gateOfNewToken(record: TokenRecord, defaultLimit?: number): Record<string, unknown>[] {
  const limit = record.limits?.requestsPerMinute ?? defaultLimit;
  const created = Date.parse(record.createdAt);
  return Array.from({ length: limit === undefined ? 1 : shardCount(limit) }, (_, shard) => ({
    ...gateKey(record.tokenId, shard),
    ...copyOf(record),
    token_budget: false,
    ...(limit === undefined ? { n: 0, ...freshRing(created) } : freshCounters(limit, shard, created)),
  }));
}

/** The gate's half of a revocation, on every shard. */
export function gateRevocation(table: string, tokenId: string, revokedAt: string) {
  return everyShard(tokenId).map((Key) => ({
    TableName: table,
    Key,
    UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :at)',
    ExpressionAttributeValues: { ':at': revokedAt },
  }));
}

/** The gate's half of setting or removing a token's budget, on every shard. */
export function gateBudgetFlag(table: string, tokenId: string, hasBudget: boolean) {
  return everyShard(tokenId).map((Key) => ({
    TableName: table,
    Key,
    UpdateExpression: 'SET token_budget = :flag',
    ExpressionAttributeValues: { ':flag': hasBudget },
  }));
}

export function recordOf(item: Record<string, unknown>): TokenRecord {
  return {
    accountId: String(item.account_id),
    tokenId: String(item.token_id),
    scopes: (item.scopes as Scope[] | undefined) ?? [],
    secretHash: String(item.secret_hash),
    createdAt: String(item.created_at),
    revokedAt: typeof item.revoked_at === 'string' ? item.revoked_at : undefined,
    tags: tagsFrom(item.tags),
    limits: limitsFrom(item),
    fallbacks: fallbacksFrom(item),
  };
}

/** Where a token with no gate is looked up (its token item and whether it has a budget). */
export type GateSource = (
  token: PresentedToken,
  now: number,
) => Promise<{ record: TokenRecord; tokenBudget: boolean } | undefined>;
