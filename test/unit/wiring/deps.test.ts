/**
 * KMS and Secrets Manager exist only in AWS: the composition root uses them only when the Lambda
 * entry hands their adapters over. The local server refuses their settings by name (that its bundle
 * holds neither SDK client is checked on the built bundle, test/infra/local-bundle.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../lambda/wiring/config';
import { buildDeps, type AwsAdapters } from '../../../lambda/wiring/deps';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import type { EncryptionContext } from '../../../lambda/keys/ports';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin';
const CONTEXT: EncryptionContext = { account_id: 'acct0000000000001', provider: 'prov-b' };

let dataDir: string;
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'composition-root-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const config = (env: Record<string, string> = {}) =>
  loadConfig({ DATA_DIR: dataDir, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', ...env });

test('without the AWS adapters, KMS_KEY_ID and ADMIN_SECRET_ARN are refused by name, not ignored', () => {
  expect(() => buildDeps(config({ KMS_KEY_ID: 'alias/proxy' }))).toThrow(
    /KMS_KEY_ID is for the Lambda function; the local server keeps provider keys under DATA_DIR\/local-master\.key/,
  );
  expect(() => buildDeps(config({ ADMIN_SECRET_ARN: SECRET_ARN }))).toThrow(
    /ADMIN_SECRET_ARN is for the Lambda function; .*reads its admin key from ADMIN_KEY/,
  );
  // Neither set: the local key file and ADMIN_KEY, no adapter needed.
  const deps = buildDeps(config({ ADMIN_KEY: 'a-local-admin-key-of-32-characters' }));
  return expect(deps.adminKey()).resolves.toBe('a-local-admin-key-of-32-characters');
});

test("with the AWS adapters, the provider keys' data keys are wrapped by the KMS adapter and the admin key read through Secrets Manager", async () => {
  const built: string[][] = [];
  const stand = new LocalKeyWrapper(randomBytes(32));
  const aws: AwsAdapters = {
    keyWrapper: (region, keyId) => {
      built.push(['kms', region, keyId]);
      return {
        keyRef: `kms:${keyId}`,
        newDataKey: (context) => stand.newDataKey(context),
        unwrap: (wrapped, context) => stand.unwrap(wrapped, context),
      };
    },
    secretReader: (region, secretId) => {
      built.push(['secrets', region, secretId]);
      return async () => 'admin-key-from-the-secret';
    },
  };
  const deps = buildDeps(config({ KMS_KEY_ID: 'alias/proxy', ADMIN_SECRET_ARN: SECRET_ARN }), undefined, { aws });
  expect(built).toEqual([
    ['kms', 'eu-west-1', 'alias/proxy'],
    ['secrets', 'eu-west-1', SECRET_ARN],
  ]);
  const sealed = await deps.sealer.seal('sk-provider-key', CONTEXT);
  expect(sealed.keyRef).toBe('kms:alias/proxy');
  await expect(deps.sealer.open(sealed, CONTEXT)).resolves.toBe('sk-provider-key');
  await expect(deps.adminKey()).resolves.toBe('admin-key-from-the-secret');
});
