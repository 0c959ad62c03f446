import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildFoldDeps, buildLocalStoreClients } from '../wiring/deps';
import { keepDataPrivate } from './data-dir';
import { rebuildRollups } from './rollup-rebuild';
import { StreamPoller } from './stream-poller';

/**
 * The usage-stream fold as its own process, for a local server started with
 * `STATS_CONSUMER=off` (the stand-in for the consumer Lambda, which can then
 * be stopped and restarted apart from the proxy). Needs DYNAMODB_ENDPOINT.
 */
export function localStreamPoller(
  deps = buildFoldDeps(),
  clients = buildLocalStoreClients(deps.config),
  /** Between reads of the stream (the poller's default: about a second). */
  intervalMs?: number,
): StreamPoller {
  const { config, log, usageStats, spendFold, budgetAlerts } = deps;
  keepDataPrivate(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true });
  return new StreamPoller({
    raw: clients.tables,
    streams: clients.streams,
    table: config.tables.usageLogs,
    stats: usageStats,
    foldSpend: (rows) => spendFold.fold(rows),
    checkAlerts: (rows) => budgetAlerts.check(rows),
    checkpointFile: join(config.dataDir, 'stream-checkpoints.json'),
    log,
    intervalMs,
    rebuild: (since) =>
      rebuildRollups({
        raw: clients.tables,
        logsTable: config.tables.usageLogs,
        statsTable: config.tables.usageStats,
        since,
        stats: usageStats,
      }),
  });
}
