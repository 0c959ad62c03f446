import { randomInt } from 'node:crypto';
import type { GateVerdict, PresentedToken, RateLimitDecision, TokenGate, TokenRecord } from '../ports';
import {
  bucketOf,
  countersOf,
  countInWindow,
  isFinal,
  oldestClosed,
  SHARD_REQUESTS_PER_MINUTE,
  shardCount,
  shareOf,
  windowFigures,
  type WindowCounters,
} from '../sliding-minute';
import { copyOf, freshCounters, gateKey, limitsFrom, recordOf, type GateSource } from './gate-item';
import {
  closeStaleBefore,
  countExpression,
  guessedPlacement,
  pathHolds,
  placementFor,
  type Placement,
} from './gate-count';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

const MEMO_MAX = 10_000;
/** Store calls one request may make at most (a changed limit, counters to set, a moved bucket, a full shard, a missing gate). */
const MAX_ATTEMPTS = 6;

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
 * `x-proxy-ratelimit-*` figures.
 *
 * The write names the ring slots its bucket needs (gate-count.ts), chosen from the newest bucket
 * this instance last saw on the item: only a hint, which the condition checks. A second call
 * follows only a refusal the returned item shows to be wrong: the token's limit changed, the
 * item's newest bucket was not the one assumed, a shard full while another may have room, or a
 * gate not built yet. A refusal that holds for the rest of its bucket also records its time.
 */
export class DynamoTokenGate implements TokenGate {
  /** Per shard item, the newest bucket its last answer showed (a hint for the next write's expression). */
  private readonly newestSeen = new Map<string, number | undefined>();
  /** Per token, its own requests per minute as last seen (absent: the default), which the condition assumes and checks. */
  private readonly tokenLimits = new Map<string, number | undefined>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly limit: number,
    private readonly source: GateSource,
    /** Requests per minute of limit each gate shard takes (sliding-minute.ts); smaller only in tests. */
    private readonly perShard = SHARD_REQUESTS_PER_MINUTE,
    /** The time after a refusal's answer, which its closing time may not precede (the proxy's clock). */
    private readonly clock: () => number = Date.now,
  ) {}

  async admit(token: PresentedToken, now: number): Promise<GateVerdict> {
    let outcome = await this.count(token, now, 1);
    // A shard with no gate yet (a token issued before gates existed, or a shard its limit added) is built from the token item.
    for (let builds = 0; outcome.verdict === 'no gate' && builds < 2; builds++) {
      const found = await this.source(token, now);
      if (!found) return { kind: 'refused' };
      await this.build(found.record, found.tokenBudget, outcome.shard, now);
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

  /** `attempt` counts this request's calls so far, plus one; `placement` and `closed` come from an item a refusal returned. */
  private async count(
    token: PresentedToken,
    now: number,
    attempt: number,
    shard?: number,
    avoid?: number,
    placement?: Placement,
    closed = false,
  ): Promise<Outcome> {
    const ask = this.ask(token, now, shard, avoid);
    const key = gateKey(token.tokenId, ask.shard);
    const placed = placement ?? guessedPlacement(now, this.newestSeen.get(key.counter_key));
    const count = countExpression(placed, closed);
    try {
      const { Attributes } = await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: key,
          UpdateExpression: count.update,
          // Only a real, unrevoked token under its limit is counted: a forged or revoked one uses up nothing.
          ConditionExpression: `${this.authentic(ask)} AND m_limit = :share AND ${count.condition}`,
          // A refused request changes nothing, "last used" included.
          ExpressionAttributeValues: { ...this.authenticValues(ask), ':share': ask.share, ...count.values },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
      const item = Attributes ?? {};
      this.remember(token.tokenId, key.counter_key, item);
      return { verdict: this.verdict('admitted', ask, item, placed.at), shard: ask.shard, attempts: attempt };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const old = conditionFailedItem(error);
      if (!old || typeof old.secret_hash !== 'string')
        return { verdict: 'no gate', shard: ask.shard, attempts: attempt };
      return this.refusedBy(ask, old, attempt, placed);
    }
  }

  /** Why the item refused, from the item itself: a real refusal, or a wrong assumption to correct and ask again. */
  private async refusedBy(ask: Ask, old: Item, attempt: number, tried: Placement): Promise<Outcome> {
    const { token, now } = ask;
    const record = recordOf(old);
    const decided = (verdict: GateVerdict): Outcome => ({ verdict, shard: ask.shard, attempts: attempt });
    if (record.revokedAt || old.secret_hash !== token.secretHash) return decided({ kind: 'refused', record });
    const key = gateKey(token.tokenId, ask.shard).counter_key;
    this.remember(token.tokenId, key, old);
    const last = attempt >= MAX_ATTEMPTS;
    // The token's limit changed: ask again, now with the new one.
    if (ask.assumed !== limitsFrom(old).requestsPerMinute && !last) {
      const again = this.ask(token, now, ask.shard);
      if (again.shard === ask.shard && old.m_limit !== again.share) return this.rebase(again, old, attempt + 1);
      return this.count(token, now, attempt + 1, again.shard);
    }
    // Counters not set for this share (a new limit, or a new token): set them, then count.
    if (old.m_limit !== ask.share && !last) return this.rebase(ask, old, attempt + 1);
    const counters = countersOf(old);
    const placement = pathHolds(tried.path, counters.b, counters.n, tried.bucket)
      ? tried
      : placementFor(now, counters.b);
    // Room after all, seen from the item: the write assumed another newest bucket, or did not offer the closed oldest one.
    if (countInWindow(counters, placement.at) < ask.share && !last)
      return this.count(token, now, attempt + 1, ask.shard, undefined, placement, oldestClosed(counters, placement.at));
    // This shard is full; another may not be.
    if (ask.shards > 1 && attempt === 1) return this.count(token, now, attempt + 1, undefined, ask.shard);
    const closedAt = isFinal(ask.share, counters, placement.at)
      ? await this.close(ask, counters, placement)
      : undefined;
    return decided(this.verdict('limited', ask, closedAt === undefined ? old : { ...old, z: closedAt }, placement.at));
  }

  /**
   * Records that the refused request's bucket is full for good (sliding-minute.ts): every
   * admission in it was stamped before now, so it stops counting 60 s after. Kept when an earlier
   * bucket of the window has one already; skipped when the bucket ended meanwhile. The time
   * recorded, if this call recorded one.
   */
  private async close(ask: Ask, counters: WindowCounters, placement: Placement): Promise<number | undefined> {
    const at = Math.max(placement.at, this.clock());
    const useful = counters.z === undefined || counters.z < closeStaleBefore(placement.at);
    if (!useful || bucketOf(at) !== placement.bucket) return undefined;
    return this.doc
      .send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(ask.token.tokenId, ask.shard),
          UpdateExpression: 'SET z = :z',
          ConditionExpression: `${this.authentic(ask)} AND m_limit = :share AND (attribute_not_exists(z) OR z < :stale)`,
          ExpressionAttributeValues: {
            ...this.authenticValues(ask),
            ':share': ask.share,
            ':z': at,
            ':stale': closeStaleBefore(placement.at),
          },
        },
      })
      .then(
        () => at,
        (error: Error) => {
          // Another refusal closed a bucket of the window first, or the limit changed: either way, nothing to add.
          if (error.name !== 'ConditionalCheckFailedException') throw error;
          return undefined;
        },
      );
  }

  /**
   * Sets a shard's counters for its share (`m = n - share`), from the item a refusal returned, and
   * counts the request in the same write when that item shows room; guarded by the share it was set
   * for and, when counting, by the count it read. A closing time recorded under the old share is
   * dropped. Another request changing the item meanwhile makes it ask again.
   */
  private async rebase(ask: Ask, old: Item, attempt: number): Promise<Outcome> {
    const { token, now } = ask;
    const was = typeof old.m_limit === 'number' ? old.m_limit : undefined;
    const counters = countersOf({ ...old, z: undefined });
    const placement = placementFor(now, counters.b);
    const admit = countInWindow(counters, placement.at) < ask.share;
    const count = admit ? countExpression(placement, false, { n: counters.n, share: ask.share }) : undefined;
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: gateKey(token.tokenId, ask.shard),
          UpdateExpression: count?.update ?? 'SET m = n - :share, m_limit = :share REMOVE z',
          ConditionExpression: [
            this.authentic(ask),
            was === undefined ? 'attribute_not_exists(m_limit)' : 'm_limit = :was',
            ...(count ? [count.condition] : []),
          ].join(' AND '),
          ExpressionAttributeValues: {
            ...this.authenticValues(ask),
            ':share': ask.share,
            ...(was === undefined ? {} : { ':was': was }),
            ...count?.values,
          },
        },
      });
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException' || attempt >= MAX_ATTEMPTS) throw error;
      return this.count(token, now, attempt + 1, ask.shard);
    }
    // The figures from the item read, this request added (buckets it started read as starting before it).
    const after: Item = admit ? { ...old, n: counters.n + 1, z: undefined } : { ...old, z: undefined };
    const verdict = this.verdict(admit ? 'admitted' : 'limited', ask, after, placement.at);
    if (admit && placement.path.kind !== 'late')
      this.remember(token.tokenId, gateKey(token.tokenId, ask.shard).counter_key, { ...after, b: placement.bucket });
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

  private verdict(kind: 'admitted' | 'limited', ask: Ask, item: Item, at: number): GateVerdict {
    return {
      kind,
      record: recordOf(item),
      rateLimit: this.decision(ask, kind === 'admitted', countersOf(item), at),
      tokenBudget: item.token_budget === true,
    };
  }

  /**
   * The figures of the shard that decided, as the token's: its remaining share scaled to the whole
   * limit (the shards fill alike, each request going to one at random); exact with one shard.
   */
  private decision(ask: Ask, allowed: boolean, counters: WindowCounters, at: number): RateLimitDecision {
    const figures = windowFigures(ask.share, counters, at);
    const remaining = Math.min(ask.limit, Math.floor((figures.remaining * ask.limit) / ask.share));
    // A refused request had no room, whatever a concurrent change to the item shows by now.
    return { allowed, limit: ask.limit, resetAt: figures.resetAt, remaining: allowed ? remaining : 0 };
  }

  /** Notes what an answer showed: the token's limit, and the item's newest bucket (the next write's hint). */
  private remember(tokenId: string, key: string, item: Item): void {
    if (this.tokenLimits.size >= MEMO_MAX) this.tokenLimits.clear();
    this.tokenLimits.set(tokenId, limitsFrom(item).requestsPerMinute);
    if (this.newestSeen.size >= MEMO_MAX) this.newestSeen.clear();
    this.newestSeen.set(key, typeof item.b === 'number' ? item.b : undefined);
  }

  /** Fills in a missing gate shard from the token item; a revocation or budget flag already there is kept. */
  private async build(record: TokenRecord, tokenBudget: boolean, shard: number, now: number): Promise<void> {
    const values: Record<string, unknown> = { ':budget': tokenBudget };
    const names: Record<string, string> = {};
    const limit = record.limits?.requestsPerMinute ?? this.limit;
    const sets = Object.entries({ ...copyOf(record), ...freshCounters(limit, shard, now, this.perShard) }).map(
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
