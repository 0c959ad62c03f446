import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { buildFoldDeps } from './deps';
import { compareSequences } from './usage/rollups/fold';
import { streamedRows } from './usage/dynamodb/stream-records';

const deps = buildFoldDeps();

/**
 * The event of a mapping with a tumbling window: Lambda then names the shard
 * the batch comes from, which keys the fold's per-shard watermarks. The fold
 * keeps no window state of its own.
 */
type UsageStreamEvent = DynamoDBStreamEvent & { shardId?: string };

/**
 * The second Lambda: folds each batch of the usage-logs stream into the
 * hourly and daily rollups, one ADD per rollup item per batch (see
 * docs/deploy.md for the event source mapping). Rows whose rollups could not
 * be written are reported from the earliest one, so Lambda delivers them (and
 * the rows after them) again; rows already counted are skipped by the fold.
 */
export const handler = middy(async function foldUsageStream(
  event: UsageStreamEvent,
): Promise<DynamoDBBatchResponse & { state: object }> {
  const rows = streamedRows(event.Records, event.shardId ?? 'stream');
  const { failed } = await deps.usageStats.fold(rows);
  const earliest = failed.sort((a, b) => compareSequences(a.sequence, b.sequence))[0];
  return { batchItemFailures: earliest ? [{ itemIdentifier: earliest.sequence }] : [], state: {} };
});
