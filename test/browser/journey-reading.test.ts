/**
 * A member reading the dashboard: sign-in, spend on the Overview, the logs and the cache, every
 * page at laptop and phone sizes, a request's details, the CSV download and dark mode. One server
 * and one Chromium for all of it, on one history of traffic (depth-setup.ts); the endpoint kinds
 * in an account of their own.
 */
import { describeInBrowser } from './browser-harness';
import { depthWorld } from './depth-setup';
import { depthTests } from './depth';
import { kindsTests } from './kinds';
import { overviewAndLogsTests } from './overview-and-logs';
import { polishTests } from './polish';
import { screensTests } from './screens';

describeInBrowser('a member reading the dashboard', () => {
  const world = depthWorld();
  // Its overview counts the history as the world sent it (later topics add rows).
  overviewAndLogsTests(world);
  depthTests(world);
  polishTests(world);
  kindsTests(world);
  // Last, once a token without requests is listed too: its Spend cell must not widen the column when the figures arrive.
  screensTests(world);
});
