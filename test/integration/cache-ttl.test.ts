import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { tableNames } from '../../lambda/store/tables';
import { sdkDocumentClient } from '../reliability/support/dynamo';
import { startProxy, type ProxyServer } from '../support/proxy-server';

const prefix = `ttl${randomBytes(3).toString('hex')}-`;
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ tablePrefix: prefix });
});
afterAll(async () => {
  await proxy.stop();
});

const DAY = 86_400;

/** Sends one cacheable request and returns the stored entry's expiry (epoch seconds) minus now. */
async function storedLifetime(cacheControl?: string): Promise<number | undefined> {
  const doc = sdkDocumentClient();
  const table = tableNames({}, prefix).cache;
  const before = new Set(((await doc.send(new ScanCommand({ TableName: table }))).Items ?? []).map((i) => i.cache_key));
  const response = await fetch(`${proxy.proxyBase}/prov-e/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${proxy.account.token}`,
      'content-type': 'application/json',
      'x-proxy-cache': 'true',
      ...(cacheControl ? { 'cache-control': cacheControl } : {}),
    },
    body: JSON.stringify({
      model: 'llama-3.3-70b-versatile',
      messages: [{ role: 'user', content: randomBytes(8).toString('hex') }],
    }),
  });
  await response.text();
  const now = Date.now() / 1000;
  const head = ((await doc.send(new ScanCommand({ TableName: table }))).Items ?? []).find(
    (i) => i.part === 0 && !before.has(i.cache_key),
  );
  return head ? Number(head.expires_at) - now : undefined;
}

describe('cache lifetime from Cache-Control', () => {
  it('defaults to 7 days', async () => {
    expect(await storedLifetime()).toBeCloseTo(7 * DAY, -1);
  });
  it('max-age=3600 keeps it an hour', async () => {
    expect(await storedLifetime('max-age=3600')).toBeCloseTo(3600, -1);
  });
  it('a max-age over 365 days is cut to 365 days', async () => {
    expect(await storedLifetime(`max-age=${400 * DAY}`)).toBeCloseTo(365 * DAY, -1);
  });
  it('an unparsable max-age means the default; other directives are ignored', async () => {
    expect(await storedLifetime('max-age=soon')).toBeCloseTo(7 * DAY, -1);
    expect(await storedLifetime('no-store, max-age=60')).toBeCloseTo(60, -1);
  });
  it('max-age=0 stores nothing', async () => {
    expect(await storedLifetime('max-age=0')).toBeUndefined();
  });
});
