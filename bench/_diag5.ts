import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { startBenchUpstream, monotonicMs } from './fake-upstream';
import { startProxyServer } from './processes';
import { JSON_SHAPE } from './phases';
import { percentiles } from './stats';
import { request, Agent } from 'node:http';
const up = await startBenchUpstream(JSON_SHAPE);
const ddb = await startDynamoDbLocal();
const proxy = await startProxyServer({ upstreamOrigin: up.origin, dynamoEndpoint: ddb.endpoint });
const body = JSON.stringify({ model: 'fam-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const u = new URL(proxy.url);
const one = (headers: Record<string,string>) => new Promise<{ head: number; end: number }>((resolve) => {
  const t0 = monotonicMs(); let head = 0;
  const req = request({ host: u.hostname, port: u.port, path: '/api/proxy/prov-b/v1/chat/completions', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => { head = monotonicMs() - t0; res.resume(); res.on('end', () => resolve({ head, end: monotonicMs() - t0 })); });
  req.end(body);
});
const go = async (label: string, headers: Record<string,string>, n: number, thinkMs: number) => {
  const before: number[] = [], after: number[] = [], total: number[] = [], head: number[] = [];
  for (let i = 0; i < n; i++) {
    up.startRecording();
    const t0 = monotonicMs();
    const r = await one(headers);
    const a = up.arrivals[0] ?? (t0 + r.end);
    before.push(a - t0); after.push(t0 + r.end - a); total.push(r.end); head.push(r.head);
    up.stopRecording();
    if (thinkMs) await new Promise(res => setTimeout(res, thinkMs));
  }
  const p = (x: number[]) => { const q = percentiles(x); return `${q.p50.toFixed(2)}/${q.p95.toFixed(2)}`; };
  console.log(label.padEnd(28), `think ${thinkMs}`.padEnd(9), `before-upstream ${p(before)}  upstream→end ${p(after)}  headers ${p(head)} total ${p(total)}`);
};
const stored = { authorization: `Bearer ${proxy.token}` };
await go('warm', stored, 300, 0);
for (let k = 0; k < 2; k++) {
  await go('stored', stored, 300, 0);
  await go('stored', stored, 150, 30);
  await go('pass', { authorization: 'Bearer sk-own', 'x-proxy-token': proxy.token }, 150, 30);
}
await proxy.stop(); await ddb.stop(); await up.close();
