/**
 * The benchmark's leaving-client phase tells a server that dies from one that copes: a small
 * server that throws when a client leaves is reported as crashed, with its error, while this
 * proxy (the real local server on DynamoDB Local) survives every kind of leaving client, answers
 * every client that stays, and writes a usage row for every upstream call it made.
 */
import { disconnectPhase, countRows, type DisconnectContender } from '../../bench/disconnects';
import { buildContenders } from '../../bench/contenders';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startLoadClient, type LoadClient } from '../../bench/load-client';
import { memoryMb } from '../../bench/process-stats';
import { startChild, startProxyServer, type Child } from '../../bench/processes';

/** Answers like a provider, and throws (uncaught) as soon as a client leaves before its answer ends. */
const FRAGILE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', () => {
    const stream = JSON.parse(Buffer.concat(parts).toString() || '{}').stream === true;
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      if (!stream) return res.end('{"ok":true}');
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write('data: {"n":' + sent + '}\\n\\n');
        if (++sent === 10) { clearInterval(timer); res.end('data: [DONE]\\n\\n'); }
      }, 5);
    }, 20);
  });
  res.on('close', () => {
    if (!res.writableFinished) setImmediate(() => { throw new Error('client left mid-request'); });
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
`;

const OPTIONS = { clients: 48, concurrency: 8, batch: 16, maxRestarts: 1, maxDropDelayMs: 40 };

let upstream: BenchUpstream;
let load: LoadClient;

beforeAll(async () => {
  upstream = await startBenchUpstream({ latencyMs: 20, chunks: 10, chunkIntervalMs: 5 });
  load = await startLoadClient(process.cwd());
});
afterAll(async () => {
  await load?.stop();
  await upstream?.close();
});

const specFor = (proxyUrl: string, token: string, id: 'stored' | 'pipe') => {
  const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
  return buildContenders({ upstreamOrigin: upstream.origin, pipe: { ...placeholder, url: proxyUrl }, proxy: { ...placeholder, url: proxyUrl, token } as never, portkey: placeholder }).find(
    (c) => c.id === id,
  )!.spec;
};

test('a server that dies when a client leaves is reported as crashed, with its error', async () => {
  const fragile: DisconnectContender = {
    id: 'pipe',
    label: 'fragile server',
    async start() {
      const child = await startChild({ name: 'fragile', args: ['-e', FRAGILE_SERVER], ready: /listening on (http:\/\/[\d.:]+)/ });
      return { child, spec: specFor(child.url, '', 'pipe') };
    },
  };
  const [figures] = await disconnectPhase(load, upstream, [fragile], OPTIONS, (pid) => memoryMb(pid).rss);
  expect(figures!.crashes).toBeGreaterThanOrEqual(1);
  expect(figures!.firstCrashAfter).toBeLessThanOrEqual(OPTIONS.clients);
  expect(figures!.firstCrash).toContain('client left mid-request');
});

test('this proxy survives clients leaving before the headers, mid-stream and mid-upload, and every upstream call has its row', async () => {
  const proxy: DisconnectContender = {
    id: 'stored',
    label: 'this proxy, stored key',
    async start() {
      const server = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: process.env.DYNAMODB_ENDPOINT! });
      return { child: server, spec: specFor(server.url, server.token, 'stored'), rows: () => countRows(server.url, server.token) };
    },
  };
  const [figures] = await disconnectPhase(load, upstream, [proxy], OPTIONS, (pid) => memoryMb(pid).rss);
  expect(figures!.clients).toBe(OPTIONS.clients);
  expect(figures!.crashes).toBe(0);
  expect(figures!.survived).toBe(true);
  for (const kind of ['beforeHeaders', 'midStream', 'midUpload'] as const) {
    expect(figures!.byKind[kind].sent).toBeGreaterThan(0);
    expect(figures!.byKind[kind].dropped).toBeGreaterThan(0);
  }
  const stayed = figures!.byKind.complete;
  expect(stayed.sent).toBeGreaterThan(0);
  expect(stayed.answered).toBe(stayed.sent);
  expect(figures!.upstreamCalls).toBeGreaterThan(0);
  expect(figures!.rows).toBeGreaterThanOrEqual(figures!.upstreamCalls!);
});
