/**
 * Text a client sends and the proxy quotes or keeps — an `x-proxy-tags` pair, a tag value, the
 * `x-proxy-user` requester label, the `model` — never carries a credential of the request onward
 * (SECURITY.md, "What is scrubbed where"): not in the error answer, not in the row (as `/api/logs`
 * and the CSV export return it), not in any table, not in any log line. A quote the proxy cuts short
 * loses the start of a credential too.
 */
import { randomBytes } from 'node:crypto';
import type { ProviderId } from '../fakes/start-fakes';
import { callProxy, expectEndpointError, type CallResult } from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import { startProxy, type ProxyServer, type Account } from '../support/proxy-server';
import { tableText, tokenSecret } from './support/observed';

const TABLE_PREFIX = `scr${Date.now().toString(36)}-`;
const OWN_KEY = `ck-live-${randomBytes(16).toString('hex')}`;

let proxy: ProxyServer;
/** An account whose token may use only models starting with `allowed-`. */
let limited: Account;
const answers: string[] = [];

beforeAll(async () => {
  proxy = await startProxy({ tablePrefix: TABLE_PREFIX });
  proxy.secrets.add(OWN_KEY);
  limited = await proxy.createAccount('limited');
  await proxy.saveKey(limited.token, 'prov-b');
  const set = await proxy.api(`/api/tokens/${limited.tokenId}/limits`, {
    method: 'PUT',
    token: limited.token,
    body: { models: ['allowed-'] },
  });
  expect(set.status).toBe(200);
});
afterAll(async () => {
  await proxy?.stop();
});

/** Every credential these requests carried, and the start of each secret a cut quote could keep. */
function credentials(): string[] {
  const whole = [proxy.account.token, limited.token, OWN_KEY, ...Object.values(proxy.storedKeys)];
  const secrets = [tokenSecret(proxy.account.token), tokenSecret(limited.token), OWN_KEY];
  return [...whole, ...secrets, ...secrets.map((secret) => secret.slice(0, 12))];
}
const present = (text: string) =>
  credentials()
    .filter((secret) => text.includes(secret))
    .map((secret) => `${secret.slice(0, 12)}…`);

async function call(
  provider: ProviderId,
  token: string,
  options: { providerKey?: string; headers?: Record<string, string>; model?: string },
): Promise<CallResult> {
  const body =
    options.model === undefined
      ? undefined
      : { model: options.model, max_tokens: 16, messages: [{ role: 'user', content: 'scrub' }] };
  const result = await callProxy(proxy, {
    provider,
    token,
    providerKey: options.providerKey,
    headers: options.headers,
    body,
    prompt: `scrub ${Math.random()}`,
  });
  answers.push(result.text, JSON.stringify([...result.headers]));
  return result;
}

describe('an x-proxy-tags pair without "=" quoted in the 400', () => {
  test.each([
    ['the proxy token (quoted cut to 60 characters)', () => ({ tags: proxy.account.token, mode: 'stored' as const })],
    ["the token's secret part", () => ({ tags: tokenSecret(proxy.account.token), mode: 'stored' as const })],
    ["the caller's own key", () => ({ tags: `team=a, ${OWN_KEY}`, mode: 'pass-through' as const })],
  ])('%s', async (_, make) => {
    const { tags, mode } = make();
    const result = await call('prov-b', proxy.account.token, {
      providerKey: mode === 'pass-through' ? OWN_KEY : undefined,
      headers: { 'x-proxy-tags': tags },
    });
    expect(result.status).toBe(400);
    const message = expectEndpointError('prov-b', result.text);
    expect(message).toMatch(/^x-proxy-tags: ".*\[redacted\]…?" is not a key=value pair/);
    expect(present(result.text)).toEqual([]);
  });
});

test('a model outside the token’s list, quoted in the 403 and kept on the row: whole, and cut to 200 characters', async () => {
  for (const model of [`m ${limited.token}`, `${'m'.repeat(150)}${limited.token}`]) {
    const result = await call('prov-b', limited.token, { model });
    expect(result.status).toBe(403);
    expect(expectEndpointError('prov-b', result.text)).toContain('[redacted]');
    expect(present(result.text)).toEqual([]);
    const row = await rowOf(proxy, limited.token, result.requestId);
    expect(row).toMatchObject({ status_code: 403 });
    expect(String(row.model)).toMatch(/^m+ ?\[redacted\]$/);
    expect(String(row.error)).toContain('[redacted]');
    expect(present(JSON.stringify(row))).toEqual([]);
  }
});

describe.each(['stored', 'pass-through'] as const)(
  '%s mode: requester label, tag values and model kept on an answered row',
  (mode) => {
    test.each(['prov-a', 'prov-b'] as const)('%s', async (provider) => {
      const token = proxy.account.token;
      const secret = mode === 'stored' ? tokenSecret(token) : OWN_KEY;
      const result = await call(provider, token, {
        providerKey: mode === 'pass-through' ? OWN_KEY : undefined,
        headers: { 'x-proxy-user': `alice ${token} ${secret}`, 'x-proxy-tags': `team=${token}, part=x${secret}` },
        model: `model-${secret}`,
      });
      expect(result.status).toBe(200);
      expect(present(result.text)).toEqual([]);
      const row = await rowOf(proxy, token, result.requestId);
      expect(row).toMatchObject({
        status_code: 200,
        requester: 'alice [redacted] [redacted]',
        tags: { team: '[redacted]', part: 'x[redacted]' },
        model: 'model-[redacted]',
      });
      expect(present(JSON.stringify(row))).toEqual([]);
    });
  },
);

test('the CSV export, every table and every log line are free of them', async () => {
  for (const token of [proxy.account.token, limited.token]) {
    const csv = await proxy.api('/api/logs.csv', { token });
    expect(csv.status).toBe(200);
    const text = await csv.text();
    expect(text).toContain('[redacted]');
    expect(present(text)).toEqual([]);
  }
  const tables = Object.values(await tableText(TABLE_PREFIX))
    .flat()
    .join('\n');
  expect(tables).toContain('[redacted]');
  expect(present(tables)).toEqual([]);
  expect(present(answers.join('\n'))).toEqual([]);
  expect(present(proxy.output())).toEqual([]);
});
