import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildFoldDeps } from '../deps';
import { createDynamoClients } from '../store/dynamodb/client';
import { StreamPoller } from './stream-poller';

/**
 * The usage-stream fold as its own process, for a local server started with
 * `STATS_CONSUMER=off` (the stand-in for the consumer Lambda, which can then
 * be stopped and restarted apart from the proxy). Needs DYNAMODB_ENDPOINT.
 */
export function localStreamPoller(deps = buildFoldDeps()): StreamPoller {
  const { config, log, usageStats } = deps;
  const local = Boolean(config.dynamoEndpoint);
  const credentials = local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined;
  mkdirSync(config.dataDir, { recursive: true });
  return new StreamPoller({
    raw: createDynamoClients({ region: config.region, endpoint: config.dynamoEndpoint }).raw,
    streams: new DynamoDBStreamsClient({ region: config.region, endpoint: config.dynamoEndpoint, credentials }),
    table: config.tables.usageLogs,
    stats: usageStats,
    checkpointFile: join(config.dataDir, 'stream-checkpoints.json'),
    log,
  });
}
