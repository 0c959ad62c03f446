/**
 * Keeping spend in check on the dashboard: budgets and their alerts, tags and spend by tag, and
 * the Overview's lists once they are cut. One server and one Chromium; each test in an account of
 * its own.
 */
import { randomBytes } from 'node:crypto';
import { alertsTests } from './alerts';
import { describeInBrowser, proxyAndBrowser } from './browser-harness';
import { budgetsTests } from './budgets';
import { cutListsTests } from './cut-lists';
import { tagsTests } from './tags';

describeInBrowser('keeping spend in check', () => {
  // Known here: the cut lists fold their values straight into the server's tables.
  const tablePrefix = `p${randomBytes(4).toString('hex')}-`;
  const world = proxyAndBrowser({ tablePrefix });
  budgetsTests(world);
  alertsTests(world);
  tagsTests(world);
  cutListsTests(world, tablePrefix);
});
