/**
 * Failed authentications are counted and slowed (SECURITY.md, "Failed sign-ins"): each writes one
 * `authentication failed` log line (what the stack's metric filter counts for its alarm), never
 * the credential; after a few failures from one address its failed answers are held a moment,
 * doubling up to 2 s; a correct credential from that same address is answered at once. Before,
 * 1,280 wrong admin and management attempts went through in 1.5 s with no line to count.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { FREE_FAILURES } from '../../lambda/auth/failed-sign-ins';
import { eventually } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  // The test servers hold no failed sign-in (NO_SIGN_IN_HOLD); this one keeps the default hold.
  proxy = await startProxy({ env: { FAILED_SIGN_IN_MAX_DELAY_MS: undefined } });
});
afterAll(async () => {
  // Fails if the server printed any secret of the suite, the wrong credentials below included.
  await proxy?.stop();
});

interface FailureLine {
  message: string;
  level: string;
  credential: string;
  source_ip: string;
  failures: number;
  delay_ms: number;
}

function failureLines(): FailureLine[] {
  return proxy
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FailureLine)
    .filter((line) => line.message === 'authentication failed');
}

const linesAtLeast = (count: number) =>
  eventually(async () => (failureLines().length >= count ? failureLines() : undefined));

const wrong = (label: string) => {
  const secret = `${label}-${randomBytes(12).toString('hex')}`;
  proxy.secrets.add(secret);
  return secret;
};

/** The account's own token with another secret: well formed, names a real token, does not match. */
function wrongToken(): string {
  const token = proxy.account.token;
  const forged = token.slice(0, -8) + randomBytes(4).toString('hex');
  proxy.secrets.add(forged);
  return forged;
}

const adminAttempt = (key: string) => proxy.api('/api/admin/accounts', { token: key, body: { name: 'x' } });
const manageAttempt = (token: string) => proxy.api('/api/stats', { token });
const proxyAttempt = (token: string) =>
  new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: token, maxRetries: 0 }).chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => 200,
      (error: unknown) => (error as InstanceType<typeof OpenAI.APIError>).status,
    );

test('each failed admin key, management sign-in and proxy token writes one line to count; repeated ones are held longer', async () => {
  const statuses = [
    (await adminAttempt(wrong('admin'))).status,
    (await adminAttempt(wrong('admin'))).status,
    (await manageAttempt(wrongToken())).status,
    (await manageAttempt(wrongToken())).status,
    await proxyAttempt(wrongToken()),
    await proxyAttempt(wrong('sk-proxy')),
    (await adminAttempt(wrong('admin'))).status,
    (await manageAttempt(wrongToken())).status,
  ];
  expect(statuses).toEqual(Array(8).fill(401));
  const lines = (await linesAtLeast(8))!;
  expect(lines.map((l) => l.credential)).toEqual([
    'admin key',
    'admin key',
    'manage token',
    'manage token',
    'proxy token',
    'proxy token',
    'admin key',
    'manage token',
  ]);
  expect(lines.map((l) => l.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  expect(lines.map((l) => l.delay_ms)).toEqual([...Array(FREE_FAILURES).fill(0), 100, 200, 400]);
  for (const line of lines) expect(line).toMatchObject({ level: 'WARN', source_ip: '127.0.0.1' });
});

test('a correct admin key from the same address gets in while its failed attempt is held; so do its tokens', async () => {
  // Failures from this address until the next one is held for the longest.
  while ((failureLines().at(-1)?.delay_ms ?? 0) < 1_000) {
    const count = failureLines().length;
    expect((await adminAttempt(wrong('admin'))).status).toBe(401);
    await linesAtLeast(count + 1);
  }
  const before = failureLines().length;
  const finished: string[] = [];
  const held = adminAttempt(wrong('admin')).then((response) => {
    finished.push('wrong key');
    return response.status;
  });
  // The failure is counted (and its line written) before its answer is held.
  const [line] = (await linesAtLeast(before + 1))!.slice(before);
  expect(line.delay_ms).toBe(2_000);
  const admin = await adminAttempt(proxy.adminKey);
  finished.push('admin key');
  expect(admin.status).toBe(201);
  expect(await held).toBe(401);
  expect(finished).toEqual(['admin key', 'wrong key']);
  // The account's tokens still sign in and proxy from that address, and successes write no line.
  expect((await manageAttempt(proxy.account.token)).status).toBe(200);
  expect(await proxyAttempt(proxy.account.token)).toBe(200);
  expect(failureLines()).toHaveLength(before + 1);
});
