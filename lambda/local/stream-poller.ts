import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
  type GetRecordsCommandOutput,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { describeError, type Logger } from '../base/logger';
import { compareSequences } from '../usage/rollups/fold';
import { streamedRows, type UsageStreamRecord } from '../usage/dynamodb/stream-records';
import type { UsageStats } from '../usage/usage-stats';
import type { UsageRow } from '../usage/usage-row';

/** Pages read from one shard per round, so a backlog cannot starve the other shards. */
const PAGES_PER_ROUND = 20;
const SHARD_LIST_REFRESH_MS = 10_000;

export interface StreamPollerOptions {
  raw: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  table: string;
  stats: UsageStats;
  /** The budgets' spend, folded with the rollups and before the alerts (it has the same outcome as the rollups' fold). */
  foldSpend?: UsageStats['fold'];
  /** Budget alerts for the rows folded (docs/alerts.md); a throw reads the page again, as a failed fold does. */
  checkAlerts?: (rows: readonly UsageRow[]) => Promise<void>;
  /** JSON file remembering, per shard, the last record folded (a restart resumes after it). */
  checkpointFile: string;
  log: Logger;
  intervalMs?: number;
  /** Completes the rollups from the usage-logs table after a trimmed position (rollup-rebuild.ts). */
  rebuild?: (since: Date) => Promise<{ rows: number; itemsCompleted: number }>;
}

/** Checkpoint-file keys beside the shards' positions. */
const REBUILD_SINCE = 'rebuild-since';
const foldedUntilKey = (checkpointKey: string) => `folded-until ${checkpointKey}`;
/** Rows written after the last one folded may have started this much earlier (a long stream). */
const ROW_AGE_MARGIN_MS = 3_600_000;

/**
 * The local stand-in for the stream consumer Lambda: it reads the usage-logs
 * table's stream from DynamoDB Local (about once a second) and folds each page
 * of records with the same code the Lambda runs. Parent shards are read to the
 * end before their children, as Lambda does. The checkpoint only saves work on
 * restart: the fold itself never counts a row twice, so re-reading is safe.
 *
 * A position the stream has trimmed (the server stopped for longer than the stream keeps
 * records) means rows were written that the stream can no longer deliver. Reading resumes at the
 * oldest record, and once every shard has been read to its end the rollups are completed from the
 * usage-logs table (`rebuild`), so the overview has no silent gap. The pending rebuild is kept in
 * the checkpoint file until it is done, so a stop in between does not lose it.
 */
export class StreamPoller {
  private streamArn?: string;
  private shards: Shard[] = [];
  private shardsReadAt = 0;
  private readonly iterators = new Map<string, string>();
  private readonly finished = new Set<string>();
  private readonly checkpoints: Record<string, string>;
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: StreamPollerOptions) {
    this.checkpoints = existsSync(options.checkpointFile)
      ? (JSON.parse(readFileSync(options.checkpointFile, 'utf8')) as Record<string, string>)
      : {};
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.round = this.pollOnce()
        .then(() => undefined)
        .catch((error) => this.options.log.warn('usage stream not read; retrying', describeError(error)))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.intervalMs ?? 1_000);
        });
    };
    tick();
  }

  /** Finishes the round in progress, folds what is left in the stream, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
    await this.pollOnce().catch((error) =>
      this.options.log.warn('usage stream not read at shutdown', describeError(error)),
    );
  }

  /**
   * Reads until every shard is at its end (and completes the rollups if a position was trimmed),
   * for a start that should serve only once the overview is whole; gives up after `rounds`.
   */
  async catchUp(rounds = 10): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      try {
        if ((await this.pollOnce()) === 0 && !this.checkpoints[REBUILD_SINCE]) return;
      } catch (error) {
        this.options.log.warn('usage stream not read; retrying', describeError(error));
      }
    }
  }

  /** One pass over every open shard; resolves with the number of rows folded. */
  async pollOnce(): Promise<number> {
    const streamArn = await this.stream();
    if (!streamArn) return 0;
    let folded = 0;
    let atEnd = true;
    for (const shard of await this.readableShards(streamArn)) {
      const read = await this.readShard(streamArn, shard.ShardId!);
      folded += read.folded;
      atEnd &&= read.atEnd;
    }
    if (atEnd) await this.rebuildIfTrimmed();
    return folded;
  }

  /** Completes the rollups once nothing is left in the stream that the rebuild could count as missing. */
  private async rebuildIfTrimmed(): Promise<void> {
    const since = this.checkpoints[REBUILD_SINCE];
    if (!since || !this.options.rebuild) return;
    const done = await this.options.rebuild(new Date(since));
    delete this.checkpoints[REBUILD_SINCE];
    this.saveCheckpoints();
    this.options.log.info('usage rollups completed from the usage-logs table after a trimmed stream position', {
      since,
      ...done,
    });
  }

  /** Remembers, until done, that the rollups from `since` on need completing. */
  private markTrimmed(checkpointKey: string): void {
    const foldedUntil = this.checkpoints[foldedUntilKey(checkpointKey)];
    const since = new Date(foldedUntil ? Date.parse(foldedUntil) - ROW_AGE_MARGIN_MS : 0).toISOString();
    const pending = this.checkpoints[REBUILD_SINCE];
    this.checkpoints[REBUILD_SINCE] = pending && pending < since ? pending : since;
    delete this.checkpoints[checkpointKey];
    this.saveCheckpoints();
    this.options.log.warn(
      'usage stream position trimmed: reading from the oldest record, then completing the rollups from the usage-logs table',
      { since: this.checkpoints[REBUILD_SINCE] },
    );
  }

  private async stream(): Promise<string | undefined> {
    this.streamArn ??= (await this.options.raw.send(new DescribeTableCommand({ TableName: this.options.table }))).Table
      ?.LatestStreamArn;
    return this.streamArn;
  }

  /** Open shards whose parent (if still listed) has been read to its end. */
  private async readableShards(streamArn: string): Promise<Shard[]> {
    if (
      Date.now() - this.shardsReadAt > SHARD_LIST_REFRESH_MS ||
      this.shards.every((shard) => this.finished.has(shard.ShardId!))
    ) {
      const shards: Shard[] = [];
      let start: string | undefined;
      do {
        const page = await this.options.streams.send(
          new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
        );
        shards.push(...(page.StreamDescription?.Shards ?? []));
        start = page.StreamDescription?.LastEvaluatedShardId;
      } while (start);
      this.shards = shards;
      this.shardsReadAt = Date.now();
    }
    const listed = new Set(this.shards.map((shard) => shard.ShardId));
    return this.shards.filter(
      (shard) =>
        !this.finished.has(shard.ShardId!) &&
        (!shard.ParentShardId || !listed.has(shard.ParentShardId) || this.finished.has(shard.ParentShardId)),
    );
  }

  /** Folds what the shard holds; `atEnd` when nothing is left to read in it for now. */
  private async readShard(streamArn: string, shardId: string): Promise<{ folded: number; atEnd: boolean }> {
    const checkpointKey = `${streamArn} ${shardId}`;
    let folded = 0;
    for (let page = 0; page < PAGES_PER_ROUND; page++) {
      const result = await this.readPage(streamArn, shardId, checkpointKey);
      const records = (result.Records ?? []) as UsageStreamRecord[];
      const rows = streamedRows(records, shardId);
      if (rows.length) {
        const outcomes = await Promise.all([
          this.options.stats.fold(rows),
          this.options.foldSpend?.(rows) ?? { failed: [] },
        ]);
        const failed = outcomes.flatMap((outcome) => outcome.failed);
        if (failed.length) {
          // Read the page again next round; what was counted is not counted twice.
          this.iterators.delete(shardId);
          this.options.log.warn('usage rollups or spend not written; retrying', { rows: failed.length });
          return { folded, atEnd: false };
        }
        try {
          await this.options.checkAlerts?.(rows.map(({ row }) => row));
        } catch (error) {
          // Alerts already sent are claimed: reading the page again sends only the others.
          this.iterators.delete(shardId);
          this.options.log.warn('budget alerts not checked; retrying', describeError(error));
          return { folded, atEnd: false };
        }
        folded += rows.length;
      }
      const last = records.at(-1)?.dynamodb?.SequenceNumber;
      if (last && (!this.checkpoints[checkpointKey] || compareSequences(last, this.checkpoints[checkpointKey]) > 0)) {
        this.checkpoints[checkpointKey] = last;
        const newest = rows.reduce(
          (max, { row }) => (row.ts > max ? row.ts : max),
          this.checkpoints[foldedUntilKey(checkpointKey)] ?? '',
        );
        if (newest) this.checkpoints[foldedUntilKey(checkpointKey)] = newest;
        this.saveCheckpoints();
      }
      if (!result.NextShardIterator) {
        this.finished.add(shardId);
        this.iterators.delete(shardId);
        return { folded, atEnd: true };
      }
      this.iterators.set(shardId, result.NextShardIterator);
      if (records.length === 0) return { folded, atEnd: true };
    }
    return { folded, atEnd: false };
  }

  /**
   * One page of the shard from where reading stands. An iterator lives 15 minutes and a trimmed
   * position is gone for good: either way reading starts again from the checkpoint. Without one,
   * reading starts at the oldest record, so nothing can have been trimmed from under it; yet
   * DynamoDB Local refuses an iterator it gave out while the shard was empty, once records arrive
   * (a few seconds after it gave it), as if they had been: a fresh iterator reads them at once.
   */
  private async readPage(streamArn: string, shardId: string, checkpointKey: string): Promise<GetRecordsCommandOutput> {
    for (let attempt = 1; ; attempt++) {
      try {
        // Asking for an iterator after a trimmed position fails as reading from one does.
        const iterator =
          this.iterators.get(shardId) ?? (await this.iteratorFor(streamArn, shardId, this.checkpoints[checkpointKey]));
        return await this.options.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1_000 }));
      } catch (error) {
        this.iterators.delete(shardId);
        if ((error as Error).name === 'TrimmedDataAccessException') {
          if (this.checkpoints[checkpointKey]) this.markTrimmed(checkpointKey);
          else if (attempt === 1) continue;
        }
        throw error;
      }
    }
  }

  private async iteratorFor(streamArn: string, shardId: string, after: string | undefined): Promise<string> {
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand(
        after
          ? {
              StreamArn: streamArn,
              ShardId: shardId,
              ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
              SequenceNumber: after,
            }
          : { StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' },
      ),
    );
    if (!ShardIterator) throw new Error(`no iterator for shard ${shardId}`);
    return ShardIterator;
  }

  private saveCheckpoints(): void {
    const temporary = `${this.options.checkpointFile}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.checkpoints));
    renameSync(temporary, this.options.checkpointFile);
  }
}
