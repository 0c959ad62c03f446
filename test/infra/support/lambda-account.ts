import { join } from 'node:path';
import { createAccount } from '../../../lambda/auth/issue';
import { EnvelopeSealer } from '../../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import { DynamoAccountStore } from '../../../lambda/auth/dynamodb/account-store';
import { DynamoProviderKeyStore } from '../../../lambda/keys/dynamodb/provider-key-store';
import type { createTestTables } from '../../support/tables';

/** A function URL event (payload format 2.0) as Lambda delivers it. */
export function functionUrlEvent(path: string, headers: Record<string, string>, body: unknown) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      host: 'abc.lambda-url.eu-west-1.on.aws',
      'x-forwarded-for': '203.0.113.9',
      ...headers,
    },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc',
      domainName: 'abc.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/**
 * An account with a stored Anthropic key (prov-a), sealed with the local key the handler will find
 * under `dataDir`: stored mode, as in AWS with KMS in its place.
 */
export async function accountWithStoredKey(
  tables: Awaited<ReturnType<typeof createTestTables>>,
  dataDir: string,
  name: string,
  key: string,
): Promise<{ token: string; accountId: string }> {
  const accounts = new DynamoAccountStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
  const created = await createAccount(accounts, { name, now: new Date() });
  const sealer = new EnvelopeSealer(LocalKeyWrapper.fromFile(join(dataDir, 'local-master.key')));
  const secret = await sealer.seal(key, { account_id: created.accountId, provider: 'prov-a' });
  await new DynamoProviderKeyStore(tables.clients.doc, tables.tables.accounts).put(created.accountId, {
    provider: 'prov-a',
    label: 'default',
    secret,
    hint: `…${key.slice(-4)}`,
    updatedAt: new Date().toISOString(),
  });
  return { token: created.token, accountId: created.accountId };
}
