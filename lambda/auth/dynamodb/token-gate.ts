import { randomInt } from 'node:crypto';
import type { GateVerdict, PresentedToken, RateLimitDecision, TokenGate, TokenRecord } from '../ports';
import {
  bucketOf,
  bucketsBefore,
  countersOf,
  SHARD_REQUESTS_PER_MINUTE,
  shardCount,
  shareOf,
  WINDOW_BUCKETS,
  windowBuckets,
  windowFigures,
  type WindowCounters,
} from '../sliding-minute';
import { copyOf, freshCounters, gateKey, limitsFrom, recordOf, type GateSource } from './gate-item';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

const MEMO_MAX = 10_000;
/** Store calls one request may make at most (a changed limit, counters to set, a full shard, a missing gate). */
const MAX_ATTEMPTS = 4;

type Item = Record<string, unknown>;

/** A call's outcome: the verdict, or a shard with no gate yet; the shard asked and the calls made so far. */
interface Outcome {
  verdict: GateVerdict | 'no gate';
  shard: number;
  attempts: number;
}

/** What one request asks of one shard: its share of the token's limit as this instance believes it. */
interface Ask {
  token: PresentedToken;
  now: number;
  /** The token's own limit, as last seen (undefined: none, the proxy's default applies). */
  assumed: number | undefined;
  limit: number;
  shards: number;
  shard: number;
  share: number;
}

/**
 * The token gate (gate-item.ts, sliding-minute.ts). A proxied request is one conditional
 * UpdateItem on one shard of its token's gate: it counts only a token that is real, unrevoked and
 * under its limit, and returns the small item either way (`ALL_NEW`, or `ALL_OLD` when the
 * condition fails), so the copy it holds authenticates the request and its counters give the
 * `x-ratelimit-*` figures.
 *
 * A second call follows only a refusal the returned item shows to be wrong: the token's limit
 * changed (its counters are then set for the new one, in a write guarded by the count it read), a
 * shard full while another may have room, or a gate not built yet.
 */
export class DynamoTokenGate implements TokenGate {
  /** Per shard item, the buckets an earlier answer showed to be out of every window from now on. */
  private readonly staleBuckets = new Map<string, number[]>();
  /** Per token, its own requests per minute as last seen (absent: the default), which the condition assumes and checks. */
  private readonly tokenLimits = new Map<string, number | undefined>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly limit: number,
    private readonly source: GateSource,
    /** Requests per minute of limit each gate shard takes (sliding-minute.ts); smaller only in tests. */
    private readonly perShard = SHARD_REQUESTS_PER_MINUTE,
  ) {}

  async admit(token: PresentedToken, now: number): Promise<GateVerdict> {
    let outcome = await this.count(token, now, 1);
    // A shard with no gate yet (a token issued before gates existed, or a shard its limit added) is built from the token item.
    for (let builds = 0; outcome.verdict === 'no gate' && builds < 2; builds++) {
      const found = await this.source(token, now);
      if (!found) return { kind: 'refused' };
      await this.build(found.record, found.tokenBudget, outcome.shard);
      outcome = await this.count(token, now, Math.min(outcome.attempts + 1, MAX_ATTEMPTS - 1), outcome.shard);
    }
    return outcome.verdict === 'no gate' ? { kind: 'refused' } : outcome.verdict;
  }

  private ask(token: PresentedToken, now: number, shard?: number, avoid?: number): Ask {
    const assumed = this.tokenLimits.get(token.tokenId);
    const limit = assumed ?? this.limit;
    const shards = shardCount(limit, this.perShard);
    let chosen = shard !== undefined && shard < shards ? shard : shards === 1 ? 0 : randomInt(shards);
    if (avoid !== undefined && shards > 1 && chosen === avoid) chosen = (avoid + 1 + randomInt(shards - 1)) % shards;
    return { token, now, assumed, limit, shards, shard: chosen, share: shareOf(limit, shards, chosen) };
  }

  /** `attempt` counts this request's calls so far, plus one. */
  private async count(
    token: PresentedToken,
    now: number,
    attempt: number,
    shard?: number,
    avoid?: number,
  ): Promise<Outcome> {
    const ask = this.ask(token, now, shard, avoid);
    const key = gateKey(token.tokenId, ask.shard);
    const window = windowBuckets(now);
    const current = window.length - 1;
    const leaving = [
      ...new Set([bucketOf(now) - WINDOW_BUCKETS, ...(this.staleBuckets.get(key.counter_key) ?? [])]),
    ].filter((bucket) => bucket < window[0]);
    const names: Record<string, string> = { '#w': 'w' };
    window.forEach((bucket, i) => (names[`#b${i}`] = String(bucket)));
    leaving.forEach((bucket, i) => (names[`#r${i}`] = String(bucket)));
    // Fewer than the share admitted since each recorded bucket of the window began (sliding-minute.ts).
    const room = window.map((_, i) => `(attribute_not_exists(#w.#b${i}) OR m < #w.#b${i})`).join(' AND ');
    const remove = leaving.length ? ` REMOVE ${leaving.map((_, i) => `#w.#r${i}`).join(', ')}` : '';
    try {
      const { Attributes } = await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: key,
          UpdateExpression: `SET last_used_at = :used, #w.#b${current} = if_not_exists(#w.#b${current}, n) ADD n :one, m :one${remove}`,
          // Only a real, unrevoked token under its limit is counted: a forged or revoked one uses up nothing.
          ConditionExpression: `${this.authentic(ask)} AND m_limit = :share AND ${room}`,
          ExpressionAttributeNames: names,
          // A refused request changes nothing, "last used" included.
          ExpressionAttributeValues: {
            ...this.authenticValues(ask),
            ':share': ask.share,
            ':one': 1,
            ':used': new Date(now).toISOString(),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
      const item = Attributes ?? {};
      this.remember(token.tokenId, key.counter_key, item, now);
      return { verdict: this.verdict('admitted', ask, item, countersOf(item)), shard: ask.shard, attempts: attempt };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const old = conditionFailedItem(error);
      if (!old || typeof old.secret_hash !== 'string')
        return { verdict: 'no gate', shard: ask.shard, attempts: attempt };
      return this.refusedBy(ask, old, attempt);
    }
  }

  /** Why the item refused, from the item itself: a real refusal, or a wrong assumption to correct and ask again. */
  private async refusedBy(ask: Ask, old: Item, attempt: number): Promise<Outcome> {
    const { token, now } = ask;
    const record = recordOf(old);
    const decided = (verdict: GateVerdict): Outcome => ({ verdict, shard: ask.shard, attempts: attempt });
    if (record.revokedAt || old.secret_hash !== token.secretHash) return decided({ kind: 'refused', record });
    const key = gateKey(token.tokenId, ask.shard).counter_key;
    this.remember(token.tokenId, key, old, now);
    const last = attempt >= MAX_ATTEMPTS;
    // The token's limit changed: ask again, now with the new one.
    if (ask.assumed !== limitsFrom(old).requestsPerMinute && !last) {
      const again = this.ask(token, now, ask.shard);
      // Same item, counters set for the old limit: set them for the new one from this answer.
      if (again.shard === ask.shard && old.m_limit !== again.share) return this.rebase(again, old, attempt + 1);
      return this.count(token, now, attempt + 1, again.shard);
    }
    // Counters not set for this share (a new limit, or a new token): set them, counting this request if it has room.
    if (old.m_limit !== ask.share && !last) return this.rebase(ask, old, attempt + 1);
    // This shard is full; another may not be.
    if (ask.shards > 1 && attempt === 1) return this.count(token, now, attempt + 1, undefined, ask.shard);
    return decided(this.verdict('limited', ask, old, countersOf(old)));
  }

  /**
   * Sets a shard's counters for its share, from the item a refusal returned: its count in the
   * window is known, so the request is counted when it has room. Guarded by the count it read:
   * another request counted meanwhile makes it ask again.
   */
  private async rebase(ask: Ask, old: Item, attempt: number): Promise<Outcome> {
    const { token, now } = ask;
    const counters = countersOf(old);
    const counted = windowFigures(ask.share, counters, now).counted;
    const admit = counted < ask.share;
    const starts = new Map([...counters.starts].filter(([bucket]) => bucket >= windowBuckets(now)[0]));
    if (admit && !starts.has(bucketOf(now))) starts.set(bucketOf(now), counters.n);
    const n = counters.n + (admit ? 1 : 0);
    const after: WindowCounters = { n, starts };
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(token.tokenId, ask.shard),
          UpdateExpression: `SET n = :n, m = :m, m_limit = :share, w = :w${admit ? ', last_used_at = :used' : ''}`,
          ConditionExpression: `${this.authentic(ask)} AND ${typeof old.n === 'number' ? 'n = :old' : 'attribute_not_exists(n)'}`,
          ExpressionAttributeValues: {
            ...this.authenticValues(ask),
            ...(typeof old.n === 'number' ? { ':old': old.n } : {}),
            ':n': n,
            ':m': n - ask.share,
            ':share': ask.share,
            ':w': Object.fromEntries([...starts].map(([bucket, start]) => [String(bucket), start])),
            ...(admit ? { ':used': new Date(now).toISOString() } : {}),
          },
        },
      });
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException' || attempt >= MAX_ATTEMPTS) throw error;
      return this.count(token, now, attempt + 1, ask.shard);
    }
    const verdict = this.verdict(admit ? 'admitted' : 'limited', ask, old, after);
    return { verdict, shard: ask.shard, attempts: attempt };
  }

  /** The condition that the presented token is this item's, unrevoked, with the limit this request assumes. */
  private authentic(ask: Ask): string {
    const limitGuard =
      ask.assumed === undefined ? 'attribute_not_exists(requests_per_minute)' : 'requests_per_minute = :tokenLimit';
    return `secret_hash = :hash AND attribute_not_exists(revoked_at) AND ${limitGuard}`;
  }

  private authenticValues(ask: Ask): Record<string, unknown> {
    return { ':hash': ask.token.secretHash, ...(ask.assumed === undefined ? {} : { ':tokenLimit': ask.assumed }) };
  }

  private verdict(kind: 'admitted' | 'limited', ask: Ask, item: Item, counters: WindowCounters): GateVerdict {
    return {
      kind,
      record: recordOf(item),
      rateLimit: this.decision(ask, kind === 'admitted', counters),
      tokenBudget: item.token_budget === true,
    };
  }

  /**
   * The figures of the shard that decided, as the token's: its remaining share scaled to the whole
   * limit (the shards fill alike, each request going to one at random); exact with one shard.
   */
  private decision(ask: Ask, allowed: boolean, counters: WindowCounters): RateLimitDecision {
    const figures = windowFigures(ask.share, counters, ask.now);
    const remaining = Math.min(ask.limit, Math.floor((figures.remaining * ask.limit) / ask.share));
    // A refused request had no room, whatever a concurrent change to the item shows by now.
    return { allowed, limit: ask.limit, resetAt: figures.resetAt, remaining: allowed ? remaining : 0 };
  }

  /** Notes what an answer showed: the token's limit, and buckets no window will check again (the next write removes them). */
  private remember(tokenId: string, key: string, item: Item, now: number): void {
    if (this.tokenLimits.size >= MEMO_MAX) this.tokenLimits.clear();
    this.tokenLimits.set(tokenId, limitsFrom(item).requestsPerMinute);
    const stale = bucketsBefore(countersOf(item), now);
    if (stale.length === 0) {
      this.staleBuckets.delete(key);
      return;
    }
    if (this.staleBuckets.size >= MEMO_MAX) this.staleBuckets.clear();
    this.staleBuckets.set(key, stale);
  }

  /** Fills in a missing gate shard from the token item; a revocation or budget flag already there is kept. */
  private async build(record: TokenRecord, tokenBudget: boolean, shard: number): Promise<void> {
    const values: Record<string, unknown> = { ':budget': tokenBudget };
    const names: Record<string, string> = {};
    const limit = record.limits?.requestsPerMinute ?? this.limit;
    const sets = Object.entries({ ...copyOf(record), ...freshCounters(limit, shard, this.perShard) }).map(
      ([name, value]) => {
        names[`#${name}`] = name;
        values[`:${name}`] = value;
        return `#${name} = :${name}`;
      },
    );
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
          Key: gateKey(record.tokenId, shard),
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
}
