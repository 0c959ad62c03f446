import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueuedAlert } from '../alerts/ports';
import { buildFoldDeps } from '../wiring/deps';
import { foldAdapters } from '../wiring/aws-adapters';
import { exportAuditEntries } from '../export/audit-export';
import { exportRows } from '../export/usage-export';
import { streamedAuditEntries } from '../audit/dynamodb/audit-stream';
import { describeError } from '../base/logger';
import { compareSequences, type StreamedRow } from '../usage/rollups/fold';
import { streamedRows } from '../usage/dynamodb/stream-records';
import { usageMetricLines } from '../usage/usage-metrics';

const deps = buildFoldDeps(undefined, undefined, foldAdapters);
const exportStore = deps.config.usageExportBucket
  ? foldAdapters.exportStore!(deps.config.region, deps.config.usageExportBucket)
  : undefined;

/**
 * The event of a mapping with a tumbling window: Lambda then names the shard
 * the batch comes from, which keys the fold's per-shard watermarks. The fold
 * keeps no window state of its own.
 */
type UsageStreamEvent = DynamoDBStreamEvent & { shardId?: string };

/**
 * The second Lambda, invoked by three event sources: the usage-logs stream (its batches folded), the
 * alert queue (its messages delivered, alert-delivery.ts) and the audit table's stream (its entries
 * exported). The event says which.
 */
export const handler = middy(async function consume(
  event: UsageStreamEvent | SQSEvent,
): Promise<(DynamoDBBatchResponse | SQSBatchResponse) & { state?: object }> {
  if (event.Records[0]?.eventSource === 'aws:sqs') return deliverAlerts(event as SQSEvent);
  if (streamTable(event.Records[0]?.eventSourceARN) === deps.config.tables.audit) return exportAuditStream(event);
  return foldUsageStream(event);
});

/**
 * Folds a batch of the usage-logs stream into the hourly and daily rollups, one ADD per rollup
 * item per batch, and into the spend of each row's token, requester and tags, one ADD per subject
 * per batch (see docs/deploy.md for the event source mapping). Rows whose rollups or spend could
 * not be written are reported from the earliest one, so Lambda delivers them (and the rows after
 * them) again; rows already counted are skipped by the folds.
 * Then the budget alerts the batch's spend calls for are claimed and queued (docs/alerts.md); if
 * that failed, the whole batch is delivered again: alerts already queued are not queued twice.
 * Last, the rows Lambda will not deliver again (those before the earliest reported) are exported to
 * the usage bucket for Athena; if that fails, the whole batch is delivered again, and the fold and
 * the alerts skip what they did already.
 */
async function foldUsageStream(event: UsageStreamEvent): Promise<DynamoDBBatchResponse & { state: object }> {
  const rows = streamedRows(event.Records, event.shardId ?? 'stream');
  const [stats, spend] = await Promise.all([deps.usageStats.fold(rows), deps.spendFold.fold(rows)]);
  // CloudWatch metrics as log lines (docs/alerts.md, "Metrics"): only for the rows this fold counted
  // first, so a batch delivered again counts each row once.
  const counted = new Set((stats.counted ?? []).map(({ row }) => row.id));
  for (const line of usageMetricLines(rows.filter(({ row }) => counted.has(row.id)).map(({ row }) => row)))
    process.stdout.write(`${line}\n`);
  // After the spend fold: the alerts read the spend it just added.
  const alerted = await deps.budgetAlerts.check(rows.map(({ row }) => row)).then(
    () => true,
    (error: unknown) => {
      deps.log.warn('budget alerts not queued; the batch will be delivered again', describeError(error));
      return false;
    },
  );
  const retry = alerted ? [...stats.failed, ...spend.failed] : rows;
  const earliest = retry.sort((a, b) => compareSequences(a.sequence, b.sequence))[0];
  const done = earliest ? rows.filter((r) => compareSequences(r.sequence, earliest.sequence) < 0) : rows;
  const exported = await exportDone(done);
  const resumeAt = exported ? earliest : rows.sort((a, b) => compareSequences(a.sequence, b.sequence))[0];
  return { batchItemFailures: resumeAt ? [{ itemIdentifier: resumeAt.sequence }] : [], state: {} };
}

/** One attempt per queued alert, in parallel; a message whose store work failed comes again (SQS). */
async function deliverAlerts(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures = await Promise.all(
    event.Records.map((record) =>
      deps.alertDelivery.deliver(JSON.parse(record.body) as QueuedAlert).then(
        () => [],
        (error: unknown) => {
          deps.log.warn('budget alert delivery not recorded; the message will come again', describeError(error));
          return [{ itemIdentifier: record.messageId }];
        },
      ),
    ),
  );
  return { batchItemFailures: failures.flat() };
}

/** The table a stream record's source ARN names (`arn:…:table/<name>/stream/<time>`). */
const streamTable = (arn: string | undefined) => arn && /:table\/([^/]+)\/stream\//.exec(arn)?.[1];

/**
 * Exports a batch of the audit table's stream beside the usage rows (docs/people.md, "The audit
 * log"); if that fails, the whole batch is delivered again and writes the same objects.
 */
async function exportAuditStream(event: UsageStreamEvent): Promise<DynamoDBBatchResponse> {
  const entries = streamedAuditEntries(event.Records, event.shardId ?? 'stream');
  if (!exportStore || entries.length === 0) return { batchItemFailures: [] };
  return exportAuditEntries(exportStore, entries).then(
    () => ({ batchItemFailures: [] }),
    (error: unknown) => {
      deps.log.warn('audit entries not exported; the batch will be delivered again', describeError(error));
      return { batchItemFailures: [{ itemIdentifier: entries[0].sequence }] };
    },
  );
}

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
