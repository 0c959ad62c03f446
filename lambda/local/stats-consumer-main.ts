import { describeError, jsonLogger } from '../base/logger';
import { buildFoldDeps } from '../wiring/deps';
import { localStreamPoller } from './stats-consumer';

/**
 * `node dist/local/stats-consumer.mjs`: folds the usage stream and sends the budget alerts the fold
 * queues until stopped (SIGINT/SIGTERM), as the consumer Lambda does in AWS.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
try {
  const deps = buildFoldDeps();
  const poller = localStreamPoller(deps);
  const alertLoop = deps.localAlertLoop;
  poller.start();
  alertLoop?.start();
  process.stdout.write('stats consumer folding the usage stream\n');
  const stop = () => void Promise.all([poller.stop(), alertLoop?.stop()]).finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  jsonLogger.error('stats consumer did not start', describeError(error));
  process.exit(1);
}
