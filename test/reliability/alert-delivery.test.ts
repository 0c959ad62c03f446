/**
 * Budget alerts are delivered apart from the usage fold (docs/alerts.md): a webhook that never
 * answers, and one that answers after 20 s, hold no fold, so a requester budget and another
 * account's token budget are each refused at their limit within one request, as docs/budgets.md
 * ("Overshoot") states when each request's spend is folded before the next; a receiver that is down
 * and then back gets each alert exactly once, with a stable id, signed as the page documents (its
 * own check, run here); a receiver that refuses an alert leaves it `failed`, with a WARN line and
 * a metric line.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { emfProblems } from '../support/emf-specification';
import { eventually } from '../support/patience';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { startStatsConsumer } from './support/stats-consumer';
import { waitForRowCount } from './support/rows';

jest.setTimeout(600_000);

interface Post {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1: records each post; `answerAfterMs` undefined never answers. */
class Receiver {
  readonly posts: Post[] = [];
  /** Posts received and not yet answered or dropped by the sender. */
  open = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly answer: { status: number; afterMs?: number; never?: boolean }) {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += String(chunk)));
      request.on('end', () => {
        this.posts.push({ headers: request.headers, body });
        this.open++;
        response.on('close', () => this.open--);
        if (this.answer.never) return;
        setTimeout(() => response.writeHead(this.answer.status).end(), this.answer.afterMs ?? 0).unref();
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(port = 0): Promise<string> {
    await new Promise<void>((done) => this.server.listen(port, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/budget`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((done) => this.server.close(done));
  }
}

/** The signature check of docs/alerts.md, taken from the page as written and run as is. */
function documentedCheck(): (rawBody: string, header: string | undefined, secret: string) => boolean {
  const page = readFileSync(join(__dirname, '../../docs/alerts.md'), 'utf8');
  const section = page.slice(page.indexOf('### Checking the signature'));
  const code = /```js\n([\s\S]*?)```/.exec(section)![1];
  const runnable = code
    .replace(
      "import { createHmac, timingSafeEqual } from 'node:crypto';",
      "const { createHmac, timingSafeEqual } = require('node:crypto');",
    )
    .replace('export function isFromProxy', 'function isFromProxy');
  return new Function('require', `${runnable}\nreturn isFromProxy;`)(require) as ReturnType<typeof documentedCheck>;
}

let fakes: AllFakes;
let proxy: ProxyServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  fakes = await startAllFakes();
  proxy = await startProxy({
    fakes,
    // Local use and tests only: plain http receivers on this machine; retries a second apart rather than 30 s.
    env: { RATE_LIMIT_PER_MINUTE: '100000', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true', ALERT_RETRY_FIRST_SECONDS: '1' },
  });
});

afterAll(async () => {
  await proxy?.stop();
  await fakes?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(answer: ConstructorParameters<typeof Receiver>[0], port?: number) {
  const made = new Receiver(answer);
  receivers.push(made);
  return { receiver: made, url: await made.listen(port) };
}

/** An account with a stored key for prov-b, so its token alone calls it. */
async function newAccount(name: string): Promise<Account> {
  const account = await proxy.createAccount(name);
  await proxy.saveKey(account.token, 'prov-b');
  return account;
}

/** A limit of about `requests` requests, in whole micro-dollars (budgets take at most 6 decimals). */
const limitOf = (cost: number, requests: number) => Math.ceil((cost * requests) / 1000) * 1000;

async function setWebhook(account: Account, url: string): Promise<string> {
  const set = await proxy.api('/api/alerts/webhook', { method: 'PUT', token: account.token, body: { url } });
  expect(set.status).toBe(200);
  const { secret } = (await set.json()) as { secret: string };
  proxy.secrets.add(secret);
  return secret;
}

/** One request's cost for this account. */
async function probeCost(account: Account): Promise<number> {
  const probe = await callProxy(proxy, { provider: 'prov-b', token: account.token, prompt: 'probe' });
  expect(probe.status).toBe(200);
  const [row] = await waitForRowCount(proxy, account.token, 1);
  return row.cost_nanos as number;
}

interface Budgeted {
  account: Account;
  /** The spend the budget reports, in nano-dollars. */
  spent: () => Promise<number>;
  headers?: Record<string, string>;
  token: string;
}

interface Run {
  /** Spend before each request that got 200. */
  admittedAt: number[];
  refusedAt?: number;
  /** Spend folds seen while a receiver was holding a post unanswered. */
  foldsWhileHeld: number;
}

/**
 * Requests one after another until the budget refuses one, each followed by waiting for the fold
 * that counts it (the overshoot docs/budgets.md states is then one request); notes how many of
 * those folds happened while a receiver held a post open.
 */
async function spendUntilRefused(budgeted: Budgeted, held: () => boolean, max = 30): Promise<Run> {
  const run: Run = { admittedAt: [], foldsWhileHeld: 0 };
  for (let i = 0; i < max; i++) {
    const before = await budgeted.spent();
    const result = await callProxy(proxy, {
      provider: 'prov-b',
      token: budgeted.token,
      prompt: `spend ${i}`,
      headers: budgeted.headers,
    });
    if (result.status === 402) {
      run.refusedAt = before;
      return run;
    }
    expect(result.status).toBe(200);
    run.admittedAt.push(before);
    const folded = await eventually(async () => ((await budgeted.spent()) > before ? true : undefined));
    expect(folded).toBe(true);
    if (held()) run.foldsWhileHeld++;
  }
  return run;
}

test('a webhook that never answers and one that answers after 20 s hold no fold: a requester budget and another account’s token budget are refused at their limits', async () => {
  const hanging = await receiver({ status: 204, never: true });
  const slow = await receiver({ status: 204, afterMs: 20_000 });
  const first = await newAccount('alerts-hanging');
  const second = await newAccount('alerts-slow');
  await setWebhook(first, hanging.url);
  await setWebhook(second, slow.url);

  const cost = await probeCost(first);
  expect(cost).toBeGreaterThan(0);
  const limitNanos = limitOf(cost, 4);
  const limitUsd = limitNanos / 1e9;
  const alertAt = [0.25, 0.5, 0.75, 1];
  const requesterBudget = await proxy.api('/api/budgets/requesters/batch', {
    method: 'PUT',
    token: first.token,
    body: { limit_usd: limitUsd, period: 'day', alert_at: alertAt },
  });
  expect(requesterBudget.status).toBe(200);
  const tokenBudget = await proxy.api(`/api/tokens/${second.tokenId}/budget`, {
    method: 'PUT',
    token: second.token,
    body: { limit_usd: limitUsd, period: 'day', alert_at: alertAt },
  });
  expect(tokenBudget.status).toBe(200);

  const requesterSpent = async () => {
    const { requesters } = (await (await proxy.api('/api/budgets', { token: first.token })).json()) as {
      requesters: Array<{ requester: string; spent_usd: number }>;
    };
    return Math.round((requesters.find((r) => r.requester === 'batch')?.spent_usd ?? 0) * 1e9);
  };
  const tokenSpent = async () => {
    const { tokens } = (await (await proxy.api('/api/tokens', { token: second.token })).json()) as {
      tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
    };
    return Math.round((tokens.find((t) => t.token_id === second.tokenId)?.budget?.spent_usd ?? 0) * 1e9);
  };
  const held = () => hanging.receiver.open + slow.receiver.open > 0;
  const [requesterRun, tokenRun] = await Promise.all([
    spendUntilRefused(
      { account: first, token: first.token, headers: { 'x-proxy-user': 'batch' }, spent: requesterSpent },
      held,
    ),
    spendUntilRefused({ account: second, token: second.token, spent: tokenSpent }, held),
  ]);

  for (const run of [requesterRun, tokenRun]) {
    // Refused once the limit was reached, and never admitted past it: the overshoot is the last request's cost.
    expect(run.refusedAt).toBeGreaterThanOrEqual(limitNanos);
    expect(run.admittedAt.every((spent) => spent < limitNanos)).toBe(true);
  }
  // The folds went on while the receivers held alerts unanswered (a fold waiting on a webhook could not).
  expect(requesterRun.foldsWhileHeld + tokenRun.foldsWhileHeld).toBeGreaterThan(0);
  // Both receivers were sent their alerts (the alert loop delivers them after the folds that crossed the levels).
  const posted = await eventually(async () =>
    hanging.receiver.posts.length > 0 && slow.receiver.posts.length > 0 ? true : undefined,
  );
  expect(posted).toBe(true);
});

test('a receiver down, then back: each threshold’s alert arrives exactly once, with a stable id, verified by the documented check', async () => {
  // A port with nothing listening: every attempt is refused until the receiver starts on it.
  const placeholder = await receiver({ status: 204 });
  const port = Number(new URL(placeholder.url).port);
  await placeholder.receiver.close();
  receivers.splice(receivers.indexOf(placeholder.receiver), 1);

  const account = await newAccount('alerts-down');
  const secret = await setWebhook(account, `http://127.0.0.1:${port}/hooks/budget`);
  const created = await proxy.api('/api/tokens', { method: 'POST', token: account.token, body: { name: 'ci-bot' } });
  expect(created.status).toBe(201);
  const ciBot = (await created.json()) as { token_id: string; token: string };
  proxy.secrets.add(ciBot.token);

  const cost = await probeCost(account);
  const limitNanos = limitOf(cost, 3);
  const limitUsd = limitNanos / 1e9;
  const put = await proxy.api(`/api/tokens/${ciBot.token_id}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: limitUsd, period: 'day', alert_at: [0.5, 1] },
  });
  expect(put.status).toBe(200);
  const tokenSpent = async () => {
    const { tokens } = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
      tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
    };
    return Math.round((tokens.find((t) => t.token_id === ciBot.token_id)?.budget?.spent_usd ?? 0) * 1e9);
  };
  const run = await spendUntilRefused({ account, token: ciBot.token, spent: tokenSpent }, () => false);
  expect(run.refusedAt).toBeGreaterThanOrEqual(limitNanos);

  type Listed = { id: string; threshold: number; state: string; text: string; deliveries: Array<{ attempts: number }> };
  const alerts = async () =>
    ((await (await proxy.api('/api/alerts', { token: account.token })).json()) as { alerts: Listed[] }).alerts;
  // Both alerts tried and failed at least twice while the receiver was down, and still pending.
  const failing = await eventually(async () => {
    const listed = await alerts();
    return listed.length === 2 && listed.every((a) => a.state === 'pending' && (a.deliveries[0]?.attempts ?? 0) >= 2)
      ? listed
      : undefined;
  });
  expect(failing).toBeDefined();

  const back = await receiver({ status: 204 }, port);
  const delivered = await eventually(async () => {
    const listed = await alerts();
    return listed.every((a) => a.state === 'delivered') ? listed : undefined;
  });
  expect(delivered?.map((a) => a.threshold).sort()).toEqual([0.5, 1]);

  const isFromProxy = documentedCheck();
  const posts = back.receiver.posts.map(({ headers, body }) => ({
    header: headers['x-proxy-signature'] as string,
    body,
    payload: JSON.parse(body) as { id: string; threshold: number; text: string },
  }));
  // Exactly once each: one post per alert id, the ids the history lists.
  expect(posts.map((p) => p.payload.id).sort()).toEqual(delivered!.map((a) => a.id).sort());
  for (const { header, body, payload } of posts) {
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(isFromProxy(body, header, secret)).toBe(true);
    expect(isFromProxy(body.replace('"threshold"', '"threshold" '), header, secret)).toBe(false);
    expect(isFromProxy(body, header, `${secret}x`)).toBe(false);
    // The same post replayed ten minutes later falls outside the window.
    const now = Date.now;
    Date.now = () => now() + 600_000;
    try {
      expect(isFromProxy(body, header, secret)).toBe(false);
    } finally {
      Date.now = now;
    }
    // The text names the token, not its id.
    expect(payload.text).toContain('proxy token "ci-bot"');
    expect(payload.text).not.toContain(ciBot.token_id);
  }
  // Nothing more arrives: a later attempt of a delivered alert sends nothing.
  const before = back.receiver.posts.length;
  await eventually(async () => ((await alerts()).length === 2 ? true : undefined));
  expect(back.receiver.posts.length).toBe(before);
});

test('a receiver that refuses an alert leaves it failed: a WARN line, a metric line, the state in the API', async () => {
  const refusing = await receiver({ status: 400 });
  const account = await newAccount('alerts-refused');
  await setWebhook(account, refusing.url);
  const cost = await probeCost(account);
  const put = await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: limitOf(cost, 2) / 1e9, period: 'day', alert_at: [0.5] },
  });
  expect(put.status).toBe(200);
  expect((await callProxy(proxy, { provider: 'prov-b', token: account.token, prompt: 'one more' })).status).toBe(200);

  const failed = await eventually(async () => {
    const { alerts } = (await (await proxy.api('/api/alerts', { token: account.token })).json()) as {
      alerts: Array<{ id: string; state: string; deliveries: Array<{ delivered: boolean; problem?: string }> }>;
    };
    return alerts[0]?.state === 'failed' ? alerts[0] : undefined;
  });
  expect(failed?.deliveries).toEqual([{ target: 'webhook', delivered: false, attempts: 1, problem: 'answered 400' }]);
  expect(refusing.receiver.posts).toHaveLength(1);
  const lines = proxy
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const warning = lines.find((l) => l.message === 'budget alert not delivered; giving up' && l.alert_id === failed!.id);
  expect(warning?.level).toBe('WARN');
  const metric = proxy
    .output()
    .split('\n')
    .find((line) => line.includes('"AlertDeliveriesFailed"'));
  expect(metric).toBeDefined();
  expect(emfProblems(metric!)).toEqual([]);
});

test('with STATS_CONSUMER=off, the separate consumer that folds the stream sends the budget alerts', async () => {
  const tablePrefix = `asc${Date.now().toString(36)}-`;
  const env = { ALERT_WEBHOOK_ALLOW_PRIVATE: 'true', ALERT_RETRY_FIRST_SECONDS: '1' };
  const server = await startProxy({ fakes, tablePrefix, env: { ...env, STATS_CONSUMER: 'off' } });
  // Its DATA_DIR is the server's: the local key there opens the account's webhook secret.
  const consumer = await startStatsConsumer(tablePrefix, server.dataDir, env);
  try {
    const { receiver: hook, url } = await receiver({ status: 204 });
    const account = await server.createAccount('alerts-consumer');
    await server.saveKey(account.token, 'prov-b');
    const set = await server.api('/api/alerts/webhook', { method: 'PUT', token: account.token, body: { url } });
    expect(set.status).toBe(200);
    server.secrets.add(((await set.json()) as { secret: string }).secret);
    const put = await server.api(`/api/tokens/${account.tokenId}/budget`, {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 0.000001, period: 'day', alert_at: [1] },
    });
    expect(put.status).toBe(200);
    expect((await callProxy(server, { provider: 'prov-b', token: account.token, prompt: 'past it' })).status).toBe(200);
    const posted = await eventually(async () => (hook.posts.length > 0 ? hook.posts : undefined));
    expect(posted).toHaveLength(1);
    expect(consumer.output()).not.toContain('did not start');
  } finally {
    await consumer.kill();
    await server.stop();
  }
});
