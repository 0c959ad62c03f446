/**
 * KMS and Secrets Manager exist only in AWS: the local server keeps provider keys under a local key
 * file, so its bundle (what `npm start` runs) holds neither SDK client. The bundle's contents are the
 * property here; the Lambda bundle's are checked on the synthesized asset (stack.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './support/synth';

test('the local server bundle holds the DynamoDB client and no KMS or Secrets Manager client', () => {
  // The service identifiers the SDK clients carry in their code; the bundle is built before the run (test/support/global-setup.ts).
  const local = readFileSync(join(PROJECT_ROOT, 'dist/local/server.mjs'), 'utf8');
  expect(['DynamoDB_20120810', 'TrentService', 'secretsmanager'].filter((marker) => local.includes(marker))).toEqual([
    'DynamoDB_20120810',
  ]);
});
