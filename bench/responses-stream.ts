/**
 * The Responses API stream row: the same stream shape as the main benchmark's
 * stream phase (10 content events 5 ms apart), as a chat-completions stream and
 * as a Responses API stream, direct and through this proxy (stored key), rounds
 * interleaved. Event lag is how long each stamped event spent between the
 * upstream's write and the client's read; the proxy must add no buffering to
 * Responses streams (their lag p99 within the chat stream's).
 *
 *   npm run build && npx tsx bench/responses-stream.ts      (BENCH_QUICK=1 for a smoke run)
 *
 * Writes bench/responses-stream.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { OWN_PROVIDER_KEY } from './contenders';
import { startBenchUpstream } from './fake-upstream';
import { startLoadClient } from './load-client';
import type { LatencyResult, RequestSpec } from './load-protocol';
import { JSON_SHAPE, STREAM_SHAPE } from './phases';
import { ROOT, startProxyServer } from './processes';
import { percentiles, round } from './stats';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 2 : 6;
const PER_ROUND = QUICK ? 20 : 150;
const WARMUP = QUICK ? 5 : 30;

const json = { 'content-type': 'application/json' };
const chatBody = JSON.stringify({ model: 'fam-4o-mini', messages: [{ role: 'user', content: 'Summarise why a proxy should add little latency.' }], stream: true });
const responsesBody = JSON.stringify({ model: 'fam-4o-mini', input: 'Summarise why a proxy should add little latency.', stream: true });

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-responses-'));
  const upstream = await startBenchUpstream(JSON_SHAPE);
  const dynamo = await startDynamoDbLocal();
  const proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: dynamo.endpoint });
  const load = await startLoadClient(ROOT);
  try {
    upstream.setShape(STREAM_SHAPE);
    const rows: Array<[string, RequestSpec]> = [
      ['direct, chat stream', { url: `${upstream.origin}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}` }, body: chatBody, readStamps: true }],
      ['this proxy, chat stream', { url: `${proxy.url}/api/proxy/prov-b/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${proxy.token}` }, body: chatBody, readStamps: true }],
      ['direct, Responses stream', { url: `${upstream.origin}/v1/responses`, headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}` }, body: responsesBody, readStamps: true }],
      ['this proxy, Responses stream', { url: `${proxy.url}/api/proxy/prov-b/v1/responses`, headers: { ...json, authorization: `Bearer ${proxy.token}` }, body: responsesBody, readStamps: true }],
    ];
    const lags = new Map<string, number[]>();
    const firstBytes = new Map<string, number[]>();
    let errors = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, spec] of rows) {
        const result: LatencyResult = await load.latency({ spec, concurrency: 1, warmup: r === 0 ? WARMUP : 1, count: PER_ROUND });
        errors += result.errors ?? 0;
        lags.set(label, [...(lags.get(label) ?? []), ...result.eventLagMs]);
        firstBytes.set(label, [...(firstBytes.get(label) ?? []), ...result.firstByteMs]);
      }
    }
    const figures = rows.map(([label]) => {
      const lag = percentiles(lags.get(label)!);
      const first = percentiles(firstBytes.get(label)!);
      return { label, events: lags.get(label)!.length, eventLagMs: { p50: round(lag.p50, 3), p99: round(lag.p99, 3) }, firstByteMs: { p50: round(first.p50), p99: round(first.p99) } };
    });
    const chat = figures[1]!.eventLagMs.p99;
    const responses = figures[3]!.eventLagMs.p99;
    const out = { quick: QUICK, shape: STREAM_SHAPE, rounds: ROUNDS, perRound: PER_ROUND, errors, figures, responsesLagWithinChat: responses <= chat };
    for (const f of figures) {
      process.stdout.write(`${f.label.padEnd(30)} first byte p50 ${f.firstByteMs.p50} ms  event lag p50 ${f.eventLagMs.p50} p99 ${f.eventLagMs.p99} ms  (${f.events} events)\n`);
    }
    process.stdout.write(`Responses stream lag p99 ${responses} ms vs chat stream ${chat} ms: ${out.responsesLagWithinChat ? 'within' : 'ABOVE'}\n`);
    if (!QUICK) writeFileSync(join(ROOT, 'bench', 'responses-stream.json'), `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await load.stop();
    await proxy.stop();
    await dynamo.stop();
    await upstream.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
