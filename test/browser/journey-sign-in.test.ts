/**
 * An operator's own setup: people sign in through the identity provider and see what their role
 * allows, on a machine with no AWS credentials (the Bedrock card says so). One server and one
 * Chromium.
 */
import { bedrockWithoutCredentialsTests } from './bedrock';
import { describeInBrowser } from './browser-harness';
import { issuerWorld, signInTests } from './sign-in';

describeInBrowser('signing in through the identity provider, without AWS credentials', () => {
  const world = issuerWorld();
  signInTests(world);
  bedrockWithoutCredentialsTests(world);
});
