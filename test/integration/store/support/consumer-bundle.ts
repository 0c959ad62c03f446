/**
 * The built consumer Lambda (dist/lambda/stream-consumer.mjs) run in its own Node process, one
 * invocation per event, and the usage-logs stream's records read from DynamoDB Local's Streams API
 * in the shape Lambda's event source mapping delivers them. Asynchronous, so servers of the test's
 * own process (a fake S3) can answer the bundle meanwhile.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';

export type ConsumerEvent = DynamoDBStreamEvent & { shardId?: string };
export type ConsumerAnswer = { batchItemFailures: Array<{ itemIdentifier: string }> };

/** Each event's answer, in order; the bundle's other lines (metrics, logs) are left out. */
export async function invokeConsumerBundle(
  events: ConsumerEvent[],
  env: Record<string, string>,
): Promise<ConsumerAnswer[]> {
  const child = spawn(process.execPath, [join(__dirname, 'invoke-consumer.mjs')], {
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(events.map((event) => JSON.stringify(event)).join('\n') + '\n');
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`consumer bundle failed: ${stderr}`);
  return stdout
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{"batchItemFailures"'))
    .map((line) => JSON.parse(line) as ConsumerAnswer);
}

/**
 * Every record of the table's stream so far, from its first shard, each naming the stream it came
 * from (`eventSourceARN`) as Lambda's event source mapping adds it.
 */
export async function streamEvent(raw: DynamoDBClient, tableName: string): Promise<ConsumerEvent> {
  const streams = new DynamoDBStreamsClient({
    region: 'eu-west-1',
    endpoint: process.env.DYNAMODB_ENDPOINT,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const { Table } = await raw.send(new DescribeTableCommand({ TableName: tableName }));
    const StreamArn = Table!.LatestStreamArn;
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn }));
    const shardId = StreamDescription!.Shards![0]!.ShardId!;
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    const { Records } = await streams.send(new GetRecordsCommand({ ShardIterator }));
    const records = (Records ?? []).map((record) => ({ ...record, eventSourceARN: StreamArn }));
    return { Records: records as DynamoDBStreamEvent['Records'], shardId };
  } finally {
    streams.destroy();
  }
}
