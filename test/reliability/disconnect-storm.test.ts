/**
 * Hundreds of clients that hang up at random points — while uploading the
 * body, before the provider's headers, mid-stream — never take the server
 * down, and every call that reached a provider has its usage row.
 */
import { connect } from 'node:net';
import { seededRandom } from '../fakes/behaviour';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { runPool } from './support/pool';
import { credentialHeaders, ENDPOINT, PROVIDERS, requestBody } from './support/requests';
import { allRows, type Row } from './support/rows';
import { EVENTUALLY_MS, eventually } from '../support/patience';

// 400 clients and a server process: about 20 s on a quiet machine, many times that when CI shares it.
jest.setTimeout(600_000);

const CLIENTS = 400;
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  // Streams of ~20 events 5 ms apart and answers after a short think: room to leave at every stage.
  for (const provider of PROVIDERS)
    proxy.fakes.fakes[provider].always({ latencyMs: 15, chunkIntervalMs: 5, chunks: 20 });
});
afterAll(async () => {
  await proxy?.stop();
});

type LeavePoint = 'mid-upload' | 'right-after-sending' | 'before-headers' | 'mid-stream' | 'stays';

interface Client {
  index: number;
  provider: ProviderId;
  stream: boolean;
  leave: LeavePoint;
  delayMs: number;
}

/** One client on a raw socket, so it can hang up at any byte. */
function runClient(client: Client): Promise<void> {
  const { hostname, port } = new URL(proxy.url);
  const body = Buffer.from(JSON.stringify(requestBody(client.provider, `storm client ${client.index}`, client.stream)));
  const headers = {
    host: `${hostname}:${port}`,
    'content-type': 'application/json',
    'content-length': String(body.length),
    'x-proxy-user': `storm-${client.index}`,
    ...credentialHeaders(client.provider, proxy.account.token),
  };
  const head = `POST /api/proxy${ENDPOINT[client.provider]} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    const leave = () => socket.destroy();
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (client.leave === 'mid-stream' && /\r\n\r\n[\s\S]*data:/.test(received)) setTimeout(leave, client.delayMs);
      // 'stays' reads the whole answer, then closes.
      if (client.leave === 'stays' && /0\r\n\r\n$/.test(received)) socket.end();
    });
    // A safety net only: a client that stays reads to the last chunk and closes itself. Cutting one
    // early would record a disconnect for a client that meant to stay, so the net is wide.
    setTimeout(leave, EVENTUALLY_MS).unref();
    socket.on('connect', () => {
      if (client.leave === 'mid-upload') {
        socket.write(head);
        socket.write(body.subarray(0, Math.floor(body.length / 2)));
        setTimeout(leave, client.delayMs);
        return;
      }
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      if (client.leave === 'right-after-sending') setTimeout(leave, client.delayMs / 10);
      if (client.leave === 'before-headers') setTimeout(leave, 5 + client.delayMs);
    });
  });
}

test(`${CLIENTS} clients leaving at random points: the server stays up and every upstream call has a row`, async () => {
  const random = seededRandom(1811);
  const points: LeavePoint[] = ['mid-upload', 'right-after-sending', 'before-headers', 'mid-stream', 'stays'];
  const clients: Client[] = Array.from({ length: CLIENTS }, (_, index) => {
    const leave = points[Math.floor(random() * points.length)]!;
    return {
      index,
      provider: PROVIDERS[Math.floor(random() * PROVIDERS.length)]!,
      stream: leave === 'mid-stream' || random() < 0.5,
      leave,
      delayMs: Math.floor(random() * 40),
    };
  });
  await runPool(CLIENTS, 40, (index) => runClient(clients[index]!));

  // Still serving.
  const health = await fetch(`${proxy.url}/api/health`);
  expect(health.status).toBe(200);
  expect(proxy.output()).not.toMatch(/Uncaught|ERR_UNHANDLED|socket hang up/);

  // Every request a provider received (named by its prompt) has the row of the client that sent it.
  const upstreamClients = new Set<number>();
  for (const provider of PROVIDERS) {
    for (const request of proxy.fakes.fakes[provider].requests) {
      const prompt = JSON.stringify(request.json);
      const match = /storm client (\d+)/.exec(prompt);
      if (match) upstreamClients.add(Number(match[1]));
    }
  }
  expect(upstreamClients.size).toBeGreaterThan(CLIENTS / 4);
  // A body never fully received is never forwarded.
  const halfSent = clients.filter((client) => client.leave === 'mid-upload').map((client) => client.index);
  expect(halfSent.length).toBeGreaterThan(0);
  expect(halfSent.filter((index) => upstreamClients.has(index))).toEqual([]);
  let rows: Row[] = [];
  let missing: number[] = [];
  await eventually(async () => {
    rows = await allRows(proxy, proxy.account.token);
    const withRow = new Set(rows.map((row) => Number(String(row.requester).replace('storm-', ''))));
    missing = [...upstreamClients].filter((index) => !withRow.has(index));
    return missing.length ? undefined : true;
  });
  expect(missing).toEqual([]);
  // One row per request, never two.
  const requesters = rows.map((row) => row.requester);
  expect(new Set(requesters).size).toBe(requesters.length);
  // Clients that stayed got whole answers and rows without an error.
  const stayed = clients.filter((client) => client.leave === 'stays').map((client) => `storm-${client.index}`);
  const stayedRows = rows.filter((row) => stayed.includes(String(row.requester)));
  expect(stayedRows.length).toBe(stayed.length);
  for (const row of stayedRows) expect(row).toMatchObject({ status_code: 200 });
  for (const row of stayedRows) expect(row.error ?? null).toBeNull();
});
