/**
 * The built consumer Lambda (dist/lambda/stream-consumer.mjs) run in its own Node process, one
 * invocation per event, and the usage-logs stream's records read from DynamoDB Local's Streams API
 * in the shape Lambda's event source mapping delivers them. Asynchronous, so servers of the test's
 * own process (a fake S3) can answer the bundle meanwhile.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { FakeS3 } from '../../../fakes/fake-s3';

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

/** The consumer bundle's environment for an export to the fake S3 (test/fakes/fake-s3.ts). */
export const exportEnv = (tablePrefix: string, bucket: string, s3: FakeS3) => ({
  TABLE_PREFIX: tablePrefix,
  USAGE_EXPORT_BUCKET: bucket,
  AWS_ENDPOINT_URL_S3: s3.endpoint,
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_REGION: 'eu-west-1',
});

/**
 * A batch S3 refuses, then the same batch delivered again whole, twice, and as the two halves
 * bisect-on-error makes: the answers, refused one first.
 */
export async function refusedThenRedelivered(
  event: ConsumerEvent,
  env: Record<string, string>,
  s3: FakeS3,
): Promise<{ refused: ConsumerAnswer; putsWhenRefused: number; again: ConsumerAnswer[] }> {
  // More 503s than the SDK's three attempts for each object: the PUTs fail, so Lambda must deliver the batch again.
  s3.failNext(1_000);
  const [refused] = await invokeConsumerBundle([event], env);
  s3.failNext(0);
  const putsWhenRefused = s3.puts.length;
  const half = Math.floor(event.Records.length / 2);
  const again = await invokeConsumerBundle(
    [
      event,
      event,
      { ...event, Records: event.Records.slice(0, half) },
      { ...event, Records: event.Records.slice(half) },
    ],
    env,
  );
  return { refused: refused!, putsWhenRefused, again };
}

/** Every object the fake S3 holds under `<root>/<bucket>/<prefix>/dt=…/`, its JSON Lines parsed, by key. */
export function exportedObjects(root: string, bucket: string, prefix: string): Map<string, Record<string, unknown>[]> {
  const folder = join(root, bucket, prefix);
  const objects = new Map<string, Record<string, unknown>[]>();
  for (const day of readdirSync(folder))
    for (const name of readdirSync(join(folder, day)))
      objects.set(
        `${prefix}/${day}/${name}`,
        gunzipSync(readFileSync(join(folder, day, name)))
          .toString('utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      );
  return objects;
}
