/**
 * Guessing is throttled, and refusing a guess costs nothing (docs/operations.md, "Failed sign-ins").
 * Before, a wrong credential was held up to 2 s inside the invocation: with Lambda's reserved
 * concurrency of 50, about 25 bad tokens a second took every slot and real requests got Lambda's
 * 429; and 500 wrong admin keys sent at once from one address were all checked (about 220 guesses a
 * second), since the hold delayed each answer but limited nothing.
 *
 * The server here is configured as in Lambda (no hold) with the default throttle. Each client
 * connects from an address of its own on the loopback network (127.0.0.0/8), as callers in AWS come
 * from their own addresses.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHECKS_PER_MINUTE } from '../../lambda/auth/failed-sign-ins';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { requestBody } from '../reliability/support/requests';

jest.setTimeout(300_000);

let proxy: ProxyServer;
beforeAll(async () => {
  // Lambda's settings: no answer held (config.ts), the throttle at its default.
  proxy = await startProxy({ env: { FAILED_SIGN_IN_MAX_DELAY_MS: '0', FAILED_SIGN_INS_PER_MINUTE: undefined } });
});
afterAll(async () => {
  await proxy?.stop();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTP request to `url` from the loopback address `from`. */
function send(
  url: string,
  from: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method: init.method ?? 'GET', headers: init.headers, localAddress: from }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    call.on('error', reject);
    call.end(init.body);
  });
}

const adminCall = (base: string, from: string, key: string) =>
  send(`${base}/api/admin/accounts`, from, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });

const chatCall = (base: string, from: string, token: string) =>
  send(`${base}/api/proxy/prov-b/v1/chat/completions`, from, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(requestBody('prov-b', 'a real request')),
  });

/** The account's token with another secret: well formed, names a real token, does not match. */
function wrongToken(index: number): string {
  const token = proxy.account.token;
  const forged = `${token.slice(0, -8)}${index.toString(16).padStart(8, '0')}`;
  proxy.secrets.add(forged);
  return forged;
}

const countOf = (answers: Answer[], status: number) => answers.filter((answer) => answer.status === status).length;

test('500 wrong admin keys sent at once from one address: only the allowance is checked, the rest are refused at once with 429', async () => {
  const guesser = '127.0.0.3';
  const keys = Array.from({ length: 500 }, (_, i) => {
    const key = `admin-guess-${i.toString().padStart(4, '0')}-${'x'.repeat(24)}`;
    proxy.secrets.add(key);
    return key;
  });
  const started = performance.now();
  const answers = await Promise.all(keys.map((key) => adminCall(proxy.url, guesser, key)));
  const minutes = (performance.now() - started) / 60_000;

  // The allowance, and what refilled while the 500 were being answered (one every 6 s).
  expect(countOf(answers, 401)).toBeLessThanOrEqual(CHECKS_PER_MINUTE + Math.ceil(minutes * CHECKS_PER_MINUTE));
  expect(countOf(answers, 401) + countOf(answers, 429)).toBe(500);
  const refused = answers.find((answer) => answer.status === 429)!;
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(refused.body)).toEqual({
    error: { code: 'rate_limited', message: expect.stringMatching(/Too many failed sign-ins/), field: null },
  });
  // Only the checked ones were counted as failures (one log line each).
  expect(proxy.timesPrinted('"source_ip":"127.0.0.3"')).toBe(countOf(answers, 401));

  // The real admin key still works from any other address.
  expect((await adminCall(proxy.url, '127.0.0.2', proxy.adminKey)).status).toBe(201);
});

/**
 * Lambda's reserved concurrency, in front of the server: at most `limit` requests inside at once,
 * the rest refused with Lambda's own 429 before the proxy sees them. Each request is passed on from
 * its client's own address, which is what the proxy sees as the caller's (as Lambda's sourceIp).
 */
async function concurrencyCap(
  limit: number,
): Promise<{ url: string; refused(): number; busiest(): number; close(): Promise<void> }> {
  let inside = 0;
  let busiest = 0;
  let refused = 0;
  const target = new URL(proxy.url);
  const server: Server = createServer((req, res) => {
    if (inside >= limit) {
      refused++;
      req.resume();
      res.writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException' });
      res.end(JSON.stringify({ Message: 'Rate Exceeded.' }));
      return;
    }
    inside++;
    busiest = Math.max(busiest, inside);
    res.once('close', () => inside--);
    const onward = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        localAddress: req.socket.remoteAddress,
      },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    busiest: () => busiest,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('about 100 bad tokens a second against a small concurrency: legitimate requests from elsewhere still pass', async () => {
  // Lambda's default reserved concurrency (deploy.md). Before, 100 guesses a second each held 2 s kept about 200 in flight.
  const cap = await concurrencyCap(50);
  try {
    const guesser = '127.0.0.4';
    const legitimate = '127.0.0.5';
    const bad: Array<Promise<Answer>> = [];
    const latencies: number[] = [];
    const good: Answer[] = [];
    let sent = 0;
    // 100 a second (one every 10 ms) for 5 s, while a real client sends one request at a time throughout.
    const flood = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const sentAt = performance.now();
        bad.push(
          chatCall(cap.url, guesser, wrongToken(sent++)).then((answer) => {
            latencies.push(performance.now() - sentAt);
            return answer;
          }),
        );
        if (sent >= 500) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    let flooding = true;
    const started = performance.now();
    void flood.then(() => (flooding = false));
    // Paced well under the token's own rate limit (100 a minute), so that limit never answers.
    while (flooding || good.length < 5) {
      good.push(await chatCall(cap.url, legitimate, proxy.account.token));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const guesses = await Promise.all(bad);
    const minutes = (performance.now() - started) / 60_000;

    const statusAndBody = (answer: Answer) =>
      `${answer.status} ${answer.status === 200 ? '' : answer.body.slice(0, 120)}`;
    expect(good.map(statusAndBody)).toEqual(good.map(() => '200 '));
    // What the flood occupied at most, of the function's concurrency.
    latencies.sort((a, b) => a - b);
    console.log(
      `sign-in flood: ${good.length} real requests answered; guesses answered in ${Math.round(latencies[250])} ms (median), ${Math.round(latencies[499])} ms (slowest); at most ${cap.busiest()} requests in flight`,
    );
    // Every guess was answered, and only the address's allowance (and what refilled meanwhile) was checked.
    expect(countOf(guesses, 401) + countOf(guesses, 429)).toBe(500);
    expect(countOf(guesses, 401)).toBeLessThanOrEqual(CHECKS_PER_MINUTE + Math.ceil(minutes * CHECKS_PER_MINUTE));
  } finally {
    await cap.close();
  }
});

test('many callers behind one address, each with its own token: once each has passed, none is refused, even while guesses from that address are', async () => {
  const office = '127.0.0.6';
  const tokens: string[] = [];
  for (let i = 0; i < 24; i++) {
    const issued = await proxy.api('/api/tokens', { token: proxy.account.token, body: { name: `service-${i}` } });
    const { token } = (await issued.json()) as { token: string };
    proxy.secrets.add(token);
    tokens.push(token);
  }
  // First uses, a few at a time (within the allowance of credentials in check at once).
  for (let i = 0; i < tokens.length; i += 5) {
    const first = await Promise.all(tokens.slice(i, i + 5).map((token) => chatCall(proxy.url, office, token)));
    expect(first.map((answer) => answer.status)).toEqual(first.map(() => 200));
  }
  // Then all at once, twice over: more distinct credentials in check than the allowance, none refused.
  const together = await Promise.all([...tokens, ...tokens].map((token) => chatCall(proxy.url, office, token)));
  expect(together.map((answer) => answer.status)).toEqual(together.map(() => 200));
  // Guesses from the same address use up its allowance and are refused...
  const guesses = await Promise.all(
    Array.from({ length: 3 * CHECKS_PER_MINUTE }, (_, i) => chatCall(proxy.url, office, wrongToken(10_000 + i))),
  );
  expect(countOf(guesses, 429)).toBeGreaterThan(0);
  // ...while the tokens that passed still do.
  const after = await Promise.all(tokens.map((token) => chatCall(proxy.url, office, token)));
  expect(after.map((answer) => answer.status)).toEqual(after.map(() => 200));
});
