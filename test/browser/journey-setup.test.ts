/**
 * An admin setting the account up on the dashboard: provider keys and a key pool, app tokens and
 * their tags and limits, model prices, default fallbacks, and Amazon Bedrock. One server and one
 * Chromium; each test in an account of its own.
 */
import { bedrockTests } from './bedrock';
import { describeInBrowser, proxyAndBrowser } from './browser-harness';
import { fallbacksTests } from './fallbacks';
import { keyPoolTests } from './key-pool';
import { manageTests } from './manage';
import { pricesTests } from './prices';
import { tokenControlsTests } from './token-controls';

describeInBrowser('an admin setting up the account', () => {
  const world = proxyAndBrowser();
  manageTests(world);
  keyPoolTests(world);
  tokenControlsTests(world);
  pricesTests(world);
  fallbacksTests(world);
  bedrockTests(world);
});
