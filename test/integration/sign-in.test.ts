import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { freePort, startIssuer, type Issuer } from '../support/oidc-issuer';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { SignInClient } from '../support/sign-in-client';

let issuer: Issuer;
let proxy: ProxyServer;
let host: string;
const tablePrefix = `p${randomBytes(4).toString('hex')}-`;

beforeAll(async () => {
  const port = await freePort();
  issuer = await startIssuer(port);
  proxy = await startProxy({ env: issuer.proxyEnv, tablePrefix });
  host = new URL(proxy.url).host;
  proxy.secrets.add(issuer.clientSecret);
  // The admin key maps the first group; the account's admins can map the others.
  const mapped = await proxy.api(`/api/admin/accounts/${proxy.account.accountId}/roles/proxy-admins`, {
    method: 'PUT',
    body: { role: 'admin' },
  });
  expect(mapped.status).toBe(200);
  for (const [group, role] of [
    ['proxy-members', 'member'],
    ['proxy-viewers', 'viewer'],
  ])
    expect(
      (await proxy.api(`/api/roles/${group}`, { method: 'PUT', token: proxy.account.token, body: { role } })).status,
    ).toBe(200);
});
afterAll(async () => {
  await proxy?.stop();
  await issuer?.stop();
});

async function signedIn(
  login: string,
): Promise<{ client: SignInClient; csrf: string; session: Record<string, unknown> }> {
  const client = new SignInClient(proxy.url);
  const landed = await client.signIn(login);
  expect(landed.url).toBe(`${proxy.url}/`);
  const answer = await client.fetch(`${proxy.url}/api/session`);
  expect(answer.status).toBe(200);
  const session = (await answer.json()) as Record<string, unknown>;
  return { client, csrf: session.csrf_token as string, session };
}

describe('sign-in with an OpenID Connect issuer', () => {
  it('signs a person in through the issuer’s login page, with the role their group holds, in a locked-down cookie', async () => {
    const { client, session } = await signedIn('alice');
    expect(session).toMatchObject({
      account_id: proxy.account.accountId,
      role: 'admin',
      actor: 'person:alice',
      actor_name: 'alice@example.test',
      signed_in_with: 'oidc',
      csrf_token: expect.stringMatching(/^[\w-]{32}$/),
    });
    const cookie = client.proxySetCookies.find((c) => c.startsWith('proxy_session='))!;
    expect(cookie).toMatch(/; Path=\/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax$/);
    // The sign-in's own cookie (PKCE verifier, state, nonce) is sent to the callback only.
    expect(client.proxySetCookies.find((c) => c.startsWith('proxy_sign_in='))).toMatch(/Path=\/api\/auth\/callback;/);
    // The issuer's client secret never reaches the browser.
    expect(client.proxySetCookies.join('\n')).not.toContain(issuer.clientSecret);
  });

  it('gives each group its role: a viewer reads, a member issues its own tokens, an admin changes settings', async () => {
    const viewer = await signedIn('carol');
    expect(viewer.session.role).toBe('viewer');
    expect((await viewer.client.fetch(`${proxy.url}/api/tokens`)).status).toBe(200);
    const refused = await viewer.client.fetch(`${proxy.url}/api/prices/house`, {
      method: 'PUT',
      headers: { 'x-csrf-token': viewer.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 1, output: 1 }),
    });
    expect(refused.status).toBe(403);

    const member = await signedIn('bob');
    expect(member.session.role).toBe('member');
    const issued = await member.client.fetch(`${proxy.url}/api/tokens`, {
      method: 'POST',
      headers: { 'x-csrf-token': member.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bob app' }),
    });
    expect(issued.status).toBe(201);
    const { token_id: tokenId, token } = (await issued.json()) as { token_id: string; token: string };
    proxy.secrets.add(token);
    const budget = await member.client.fetch(`${proxy.url}/api/tokens/${tokenId}/budget`, {
      method: 'PUT',
      headers: { 'x-csrf-token': member.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ limit_usd: 1, period: 'day' }),
    });
    expect(budget.status).toBe(403);

    const admin = await signedIn('alice');
    const price = await admin.client.fetch(`${proxy.url}/api/prices/house`, {
      method: 'PUT',
      headers: { 'x-csrf-token': admin.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 1, output: 2 }),
    });
    expect(price.status).toBe(200);

    // Each change names the person who made it, and where from.
    const audit = (await (await proxy.api('/api/audit?limit=10', { token: proxy.account.token })).json()) as {
      items: Array<{ action: string; actor: string; actor_name: string | null; address: string; target: string }>;
    };
    expect(audit.items.find((e) => e.action === 'price.set' && e.target === 'house')).toMatchObject({
      actor: 'person:alice',
      actor_name: 'alice@example.test',
      address: '127.0.0.1',
    });
    expect(audit.items.find((e) => e.action === 'token.issued' && e.target === tokenId)).toMatchObject({
      actor: 'person:bob',
    });
    const tokens = (await (await proxy.api('/api/tokens', { token: proxy.account.token })).json()) as {
      tokens: Array<{ token_id: string; created_by: string }>;
    };
    expect(tokens.tokens.find((t) => t.token_id === tokenId)?.created_by).toBe('person:bob');
  });

  it('refuses a state-changing request of a session without its CSRF token, or with another', async () => {
    const { client, csrf } = await signedIn('alice');
    const put = (headers: Record<string, string>) =>
      client.fetch(`${proxy.url}/api/prices/csrf-model`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ input: 1, output: 1 }),
      });
    const wrong: Record<string, string>[] = [{}, { 'x-csrf-token': `${csrf}x` }];
    for (const headers of wrong) {
      const answer = await put(headers);
      expect(answer.status).toBe(403);
      expect(((await answer.json()) as { error: { message: string } }).error.message).toContain('x-csrf-token');
    }
    expect((await put({ 'x-csrf-token': csrf })).status).toBe(200);
  });

  it('refuses a forged or altered session, a callback it did not start, and a person with no mapped group', async () => {
    const { client } = await signedIn('carol');
    const genuine = client.cookie(host, 'proxy_session')!;
    const [payload, signature] = genuine.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, role: 'admin' })).toString('base64url');
    client.setCookie(host, 'proxy_session', `${forged}.${signature}`);
    expect((await client.fetch(`${proxy.url}/api/session`)).status).toBe(401);

    // A callback reached without the sign-in this browser started (login CSRF): refused.
    const stranger = new SignInClient(proxy.url);
    const started = await stranger.fetch(`${proxy.url}/api/auth/login`);
    expect(started.status).toBe(302);
    const noCookie = await fetch(`${proxy.url}/api/auth/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(noCookie.status).toBe(401);
    expect(noCookie.headers.getSetCookie()).toEqual([]);

    const nobody = new SignInClient(proxy.url);
    const landed = await nobody.signIn('dave');
    expect(landed.response.status).toBe(403);
    expect(nobody.cookie(host, 'proxy_session')).toBeUndefined();
  });

  it('signs out: the cookie is cleared', async () => {
    const { client } = await signedIn('alice');
    const out = await client.fetch(`${proxy.url}/api/auth/logout`, { method: 'POST' });
    expect(out.status).toBe(204);
    expect(client.cookie(host, 'proxy_session')).toBeUndefined();
    expect((await client.fetch(`${proxy.url}/api/session`)).status).toBe(401);
  });

  it('tells the dashboard whether sign-in is set up; a token signs in as before', async () => {
    expect(await (await fetch(`${proxy.url}/api/auth/config`)).json()).toEqual({ oidc: true });
    const session = await (await proxy.api('/api/session', { token: proxy.account.token })).json();
    expect(session).toMatchObject({ role: 'admin', signed_in_with: 'token', csrf_token: null });
  });

  it('ends every session when the admin key is replaced: the same cookie opens on the same key only', async () => {
    const { client } = await signedIn('alice');
    const cookie = `proxy_session=${client.cookie(host, 'proxy_session')!}`;
    const sessionOn = async (server: ProxyServer) =>
      (await fetch(`${server.url}/api/session`, { headers: { cookie } })).status;
    // Instances on the same tables and master key: one with the same admin key, one with a new one.
    const same = await startProxy({
      fakes: proxy.fakes,
      tablePrefix,
      sharesKeysWith: proxy,
      env: { ADMIN_KEY: proxy.adminKey },
    });
    const replaced = await startProxy({ fakes: proxy.fakes, tablePrefix, sharesKeysWith: proxy });
    try {
      expect(await sessionOn(same)).toBe(200);
      expect(await sessionOn(replaced)).toBe(401);
    } finally {
      await Promise.all([same.stop(), replaced.stop()]);
    }
  });
});

describe('a plain-HTTP issuer', () => {
  let plain: Server;
  let asked = 0;
  beforeAll(async () => {
    // Any answer would do: the proxy must not ask. 127.0.0.2 is on this machine but is not one of the
    // three loopback names a plain-HTTP issuer may have (127.0.0.1, localhost, [::1]).
    plain = createServer((_, response) => {
      asked += 1;
      response.writeHead(404).end();
    }).listen(0, '127.0.0.2');
    await once(plain, 'listening');
  });
  afterAll(() => plain?.close());

  it('is refused before any request unless it is on 127.0.0.1, localhost or [::1]', async () => {
    const { port } = plain.address() as { port: number };
    const elsewhere = await startProxy({
      fakes: proxy.fakes,
      env: { ...issuer.proxyEnv, PORT: '0', OIDC_ISSUER: `http://127.0.0.2:${port}` },
    });
    try {
      const login = await fetch(`${elsewhere.url}/api/auth/login`, { redirect: 'manual' });
      expect(login.status).toBeGreaterThanOrEqual(500);
      expect(login.headers.get('location')).toBeNull();
      expect(asked).toBe(0);
    } finally {
      await elsewhere.stop();
    }
    // The same kind of issuer on 127.0.0.1 is used over plain HTTP (the sign-ins above).
    expect(new URL(issuer.url).protocol).toBe('http:');
  });
});
