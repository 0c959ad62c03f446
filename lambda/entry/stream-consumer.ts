import { KMSClient } from '@aws-sdk/client-kms';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { SnsAlertTopic } from '../alerts/sns-topic';
import { buildFoldDeps } from '../wiring/deps';
import { S3ObjectStore } from '../export/s3-object-store';
import { exportRows } from '../export/usage-export';
import { KmsKeyWrapper } from '../keys/crypto/kms-key-wrapper';
import { describeError } from '../base/logger';
import { compareSequences, type StreamedRow } from '../usage/rollups/fold';
import { streamedRows } from '../usage/dynamodb/stream-records';
import { usageMetricLines } from '../usage/usage-metrics';

const deps = buildFoldDeps(undefined, undefined, {
  alertTopic: (region, topicArn) => new SnsAlertTopic(region, topicArn),
  keyWrapper: (region, keyId) => new KmsKeyWrapper(new KMSClient({ region }), keyId),
});
const exportStore = deps.config.usageExportBucket
  ? new S3ObjectStore(deps.config.region, deps.config.usageExportBucket)
  : undefined;

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
 * Last, the rows Lambda will not deliver again (those before the earliest reported) are exported to
 * the usage bucket for Athena; if that fails, the whole batch is delivered again, and the fold and
 * the alerts skip what they did already.
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
  const done = earliest ? rows.filter((r) => compareSequences(r.sequence, earliest.sequence) < 0) : rows;
  const exported = await exportDone(done);
  const resumeAt = exported ? earliest : rows.sort((a, b) => compareSequences(a.sequence, b.sequence))[0];
  return { batchItemFailures: resumeAt ? [{ itemIdentifier: resumeAt.sequence }] : [], state: {} };
});

/** Exports the rows done with (docs/alerts.md, "Usage in Athena"); false when they must come again. */
async function exportDone(rows: readonly StreamedRow[]): Promise<boolean> {
  if (!exportStore || rows.length === 0) return true;
  return exportRows(exportStore, rows).then(
    () => true,
    (error: unknown) => {
      deps.log.warn('usage rows not exported; the batch will be delivered again', describeError(error));
      return false;
    },
  );
}
