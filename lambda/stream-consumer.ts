import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { SnsAlertTopic } from './alerts/sns-topic';
import { buildFoldDeps } from './deps';
import { describeError } from './logger';
import { compareSequences } from './usage/rollups/fold';
import { streamedRows } from './usage/dynamodb/stream-records';
import { usageMetricLines } from './usage/usage-metrics';

const deps = buildFoldDeps(undefined, undefined, (region, topicArn) => new SnsAlertTopic(region, topicArn));

/**
 * The event of a mapping with a tumbling window: Lambda then names the shard
 * the batch comes from, which keys the fold's per-shard watermarks. The fold
 * keeps no window state of its own.
 */
type UsageStreamEvent = DynamoDBStreamEvent & { shardId?: string };

/**
 * The second Lambda: folds each batch of the usage-logs stream into the
 * hourly and daily rollups, one ADD per rollup item per batch, and into the
 * spend of each row's token, requester and tags, one ADD per subject per batch
 * (see docs/deploy.md for the event source mapping). Rows whose rollups or
 * spend could not be written are reported from the earliest one, so Lambda
 * delivers them (and the rows after them) again; rows already counted are
 * skipped by the folds.
 * Then the budget alerts the batch's spend calls for are sent (docs/alerts.md); if they could not be
 * checked, the whole batch is delivered again: alerts already sent are claimed, so none repeats.
 */
export const handler = middy(async function foldUsageStream(
  event: UsageStreamEvent,
): Promise<DynamoDBBatchResponse & { state: object }> {
  const rows = streamedRows(event.Records, event.shardId ?? 'stream');
  // CloudWatch metrics as log lines (docs/alerts.md): written before the fold, so a batch delivered again may count twice in them, never zero times.
  for (const line of usageMetricLines(
    rows.map(({ row }) => row),
    Date.now(),
  ))
    process.stdout.write(`${line}\n`);
  const [stats, spend] = await Promise.all([deps.usageStats.fold(rows), deps.spendFold.fold(rows)]);
  // After the spend fold: the alerts read the spend it just added.
  const alerted = await deps.budgetAlerts.check(rows.map(({ row }) => row)).then(
    () => true,
    (error: unknown) => {
      deps.log.warn('budget alerts not checked; the batch will be delivered again', describeError(error));
      return false;
    },
  );
  const retry = alerted ? [...stats.failed, ...spend.failed] : rows;
  const earliest = retry.sort((a, b) => compareSequences(a.sequence, b.sequence))[0];
  return { batchItemFailures: earliest ? [{ itemIdentifier: earliest.sequence }] : [], state: {} };
});
