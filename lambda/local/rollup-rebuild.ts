import {
  GetItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { allItems } from '../store/dynamodb/paginate';
import { foldRows } from '../usage/rollups/fold';
import { accountOfRowPartition } from '../usage/dynamodb/row-shards';
import type { UsageRow } from '../usage/usage-row';
import type { UsageStats } from '../usage/usage-stats';

/**
 * The local server's answer to a trimmed stream position (docs/operations.md, "Rollups after a
 * long stop"): the stream no longer holds the rows written between the last one folded and the
 * oldest one it still has, but the usage-logs table does. Every rollup item those rows can count
 * in (each hour and day from `since` on) is compared with what the table's rows add up to, and
 * what is missing is added. Items already complete get nothing, so a rebuild run twice, or over
 * rows the stream also delivered, counts no row twice. It runs once the stream has been read to
 * its end, before the server takes requests, so no row is on its way through the stream meanwhile.
 * Local only: it scans the usage-logs table, which no role in AWS may do (the consumer Lambda
 * has a dead-letter queue instead, docs/failure-modes.md).
 *
 * A row counts under the tags and labels the fold would count (`stats.countedValues`: the per-day
 * caps of that same stats object, usage/dynamodb/daily-caps.ts), asked in the order the rows were
 * written, as the stream delivers them.
 */
export async function rebuildRollups(options: {
  raw: DynamoDBClient;
  logsTable: string;
  statsTable: string;
  since: Date;
  stats: Pick<UsageStats, 'countedValues' | 'markChanged'>;
}): Promise<{ rows: number; itemsCompleted: number }> {
  // Day buckets hold whole UTC days: read from the start of the day `since` falls in.
  const from = new Date(
    Date.UTC(options.since.getUTCFullYear(), options.since.getUTCMonth(), options.since.getUTCDate()),
  ).toISOString();
  const items = await allItems((start) =>
    options.raw.send(
      new ScanCommand({
        TableName: options.logsTable,
        FilterExpression: '#ts >= :from',
        ExpressionAttributeNames: { '#ts': 'ts' },
        ExpressionAttributeValues: marshall({ ':from': from }),
        ConsistentRead: true,
        ExclusiveStartKey: start as Record<string, AttributeValue> | undefined,
      }),
    ),
  );
  // A stored row's partition key names its shard; the rollups are the account's.
  const rows = items.map((item) => {
    const row = unmarshall(item) as UsageRow;
    return { ...row, account_id: accountOfRowPartition(row.account_id) };
  });

  // In time order (the scan's is the shards'), as the stream would have delivered them.
  rows.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const counted = await options.stats.countedValues(
    rows.map((row, i) => ({ row, lineage: 'rebuild', sequence: String(i) })),
  );

  let itemsCompleted = 0;
  const completed = new Map<string, string[]>();
  // One delta per rollup item: what all of the table's rows add to it.
  for (const expected of foldRows(counted)) {
    const key = marshall({ account_id: expected.accountId, bucket: expected.bucket });
    const { Item } = await options.raw.send(
      new GetItemCommand({ TableName: options.statsTable, Key: key, ConsistentRead: true }),
    );
    const stored = Item ? unmarshall(Item) : {};
    const missing = Object.entries(expected.increments)
      .map(
        ([attribute, amount]) =>
          [attribute, amount - (typeof stored[attribute] === 'number' ? stored[attribute] : 0)] as const,
      )
      .filter(([, amount]) => amount > 0);
    if (missing.length === 0) continue;
    await options.raw.send(
      new UpdateItemCommand({
        TableName: options.statsTable,
        Key: key,
        UpdateExpression: `ADD ${missing.map((_, i) => `#a${i} :a${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(missing.map(([attribute], i) => [`#a${i}`, attribute])),
        ExpressionAttributeValues: marshall(Object.fromEntries(missing.map(([, amount], i) => [`:a${i}`, amount]))),
      }),
    );
    itemsCompleted++;
    completed.set(expected.accountId, [...(completed.get(expected.accountId) ?? []), expected.bucket]);
  }
  // A summary of a past hour or day may have been built without what was just added.
  for (const [accountId, buckets] of completed) await options.stats.markChanged(accountId, buckets);
  return { rows: rows.length, itemsCompleted };
}
