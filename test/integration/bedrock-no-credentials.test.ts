/**
 * Bedrock's stored mode on a machine with no AWS credentials (docs/bedrock.md, "Signing
 * credentials"; docs/failure-modes.md): the proxy has nothing to sign with, so the AWS SDK's Bedrock
 * Runtime client, with its own retries on, gets one `AccessDeniedException` saying how to provide
 * credentials; it makes one attempt, one row is written, and nothing reaches Bedrock.
 */
import { AccessDeniedException, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { BEDROCK_MODEL as MODEL, bedrockClient, rowOfRequester, uniqueRequester } from '../support/bedrock';
import { noAwsCredentialsEnv } from '../support/no-aws-credentials';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: noAwsCredentialsEnv() });
});
afterAll(async () => {
  await proxy?.stop();
});

const messages = [{ role: 'user' as const, content: [{ text: 'Hello' }] }];

async function signing(): Promise<unknown> {
  const response = await proxy.api('/api/keys', { token: proxy.account.token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { signing: unknown }).signing;
}

it('a signed Bedrock call answers one AccessDeniedException the SDK does not retry, with one row and no upstream call', async () => {
  // Before any request is signed, the proxy has not looked for credentials (the dashboard never makes it look).
  await expect(signing()).resolves.toEqual({ source: 'local-credential-chain', credentials: 'not-looked-up' });

  const user = uniqueRequester('no-credentials');
  // The SDK's default of three attempts: a retryable answer would be sent again.
  const client = bedrockClient(proxy.proxyBase, proxy.account.token, { 'x-proxy-user': user }, 3);
  const error = await client.send(new ConverseCommand({ modelId: MODEL, messages })).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AccessDeniedException);
  const denied = error as AccessDeniedException;
  expect(denied.$metadata.httpStatusCode).toBe(403);
  expect(denied.$metadata.attempts).toBe(1);
  expect(denied.message).toMatch(/^No AWS credentials were found to sign this request with, so it was not sent\./);
  expect(denied.message).toContain('AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  expect(denied.message).toContain('a Bedrock API key');

  const row = await rowOfRequester(proxy, user);
  expect(row).toMatchObject({ provider: 'bedrock', model: MODEL, status_code: 403, mode: 'stored' });
  expect(row.error).toBe(denied.message);
  expect(proxy.fakes.bedrock.requests).toHaveLength(0);

  // The management API (and so the dashboard's Integrations card) now says none was found.
  await expect(signing()).resolves.toEqual({ source: 'local-credential-chain', credentials: 'none-found' });
});
