import { describeError, jsonLogger } from '../base/logger';
import { localStreamPoller } from './stats-consumer';

/** `node dist/local/stats-consumer.mjs`: folds the usage stream until stopped (SIGINT/SIGTERM). */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
try {
  const poller = localStreamPoller();
  poller.start();
  process.stdout.write('stats consumer folding the usage stream\n');
  const stop = () => void poller.stop().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  jsonLogger.error('stats consumer did not start', describeError(error));
  process.exit(1);
}
