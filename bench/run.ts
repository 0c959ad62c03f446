/**
 * `npm run bench`: starts every contender on loopback, measures them in one run
 * against the same fake upstream, prints the summary table and writes
 * bench/RESULTS.md and bench/results.json. BENCH_PROFILE=1 always profiles the
 * proxy, BENCH_PROFILE=0 never does; by default it profiles when a CPU or
 * latency budget is missed. `--render-only` rewrites RESULTS.md from results.json.
 */
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { judgeBudgets } from './budgets';
import { measureColdStart } from './cold-start';
import { buildContenders, type Contender, type ContenderId } from './contenders';
import { costPerMillion } from './cost-model';
import { startBenchUpstream } from './fake-upstream';
import { startLoadClient } from './load-client';
import { JSON_SHAPE, STREAM_SHAPE, nonStreaming, streaming, throughputRamp } from './phases';
import { findDynamoDbLocalPid, machineDescription, memoryMb, sampleRss, sourceDescription } from './process-stats';
import { LAMBDA_BUNDLE, ROOT, SERVER_BUNDLE, startPipeProxy, startPortkey, startProxyServer, type Child } from './processes';
import { renderResults, summaryTable } from './report';
import type { Results } from './results';
import { measureRoundTrips, profileProxy } from './run-extras';
import { measureStoreCall } from './store-call';
import { startStoreCounter } from './store-counter';

/** Held on every counted store answer, so that parallel and sequential calls can be told apart. */
const STORE_COUNTER_DELAY_MS = 20;

const ITERATIONS = {
  c1: { rounds: 5, concurrency: 1, warmup: 100, count: 500 },
  c1Paced: { rounds: 3, concurrency: 1, warmup: 20, count: 150, pauseMs: 20 },
  c16: { rounds: 5, concurrency: 16, warmup: 200, count: 2000 },
  streamC1: { rounds: 4, concurrency: 1, warmup: 4, count: 80 },
  streamC8: { rounds: 4, concurrency: 8, warmup: 16, count: 160 },
  ramp: [8, 32, 96].map((concurrency) => ({ concurrency, durationMs: 2000 })),
  roundTrips: { warmup: 2, requests: 15 },
  storeCallsPerRound: 100,
  coldStartRuns: 10,
};

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const source = sourceDescription();
  for (const bundle of [SERVER_BUNDLE, LAMBDA_BUNDLE]) if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  const work = mkdtempSync(join(tmpdir(), 'bench-'));
  const cleanups: Array<() => Promise<unknown>> = [async () => rmSync(work, { recursive: true, force: true })];
  try {
    // Other work may rebuild dist/ while the bench runs: measure the bundles as they were at the start.
    const lambdaBundle = join(work, 'handler.mjs');
    copyFileSync(LAMBDA_BUNDLE, lambdaBundle);
    const serverBundle = join(work, 'server.mjs');
    copyFileSync(SERVER_BUNDLE, serverBundle);
    const pipeScript = join(work, 'pipe-proxy.mjs');
    await build({ entryPoints: [join(ROOT, 'bench', 'pipe-proxy.ts')], outfile: pipeScript, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });

    process.stdout.write('starting the fake upstream, DynamoDB Local, the contenders and the load generator…\n');
    const upstream = await startBenchUpstream(JSON_SHAPE);
    cleanups.push(() => upstream.close());
    const dynamo = await startDynamoDbLocal();
    cleanups.push(() => dynamo.stop());
    const dynamoPid = findDynamoDbLocalPid(Number(new URL(dynamo.endpoint).port));
    const counter = await startStoreCounter(dynamo.endpoint, STORE_COUNTER_DELAY_MS);
    cleanups.push(() => counter.close());
    const children = await Promise.allSettled([
      startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: dynamo.endpoint, entry: serverBundle }),
      startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: counter.endpoint, entry: serverBundle, name: 'proxy (store counted)' }),
      startPipeProxy(pipeScript, upstream.origin),
      startPortkey(),
    ]);
    for (const outcome of children) if (outcome.status === 'fulfilled') cleanups.push(() => (outcome.value as Child).stop());
    const failed = children.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const [proxy, countedProxy, pipe, portkey] = children.map((outcome) => (outcome as PromiseFulfilledResult<Child>).value) as [
      Awaited<ReturnType<typeof startProxyServer>>,
      Awaited<ReturnType<typeof startProxyServer>>,
      Child,
      Child,
    ];
    const load = await startLoadClient(ROOT);
    cleanups.push(() => load.stop());

    const contenders = buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy, portkey });
    const pick = (...ids: ContenderId[]) => ids.map((id) => contenders.find((c) => c.id === id)!);
    const main6 = pick('direct', 'pipe', 'stored', 'passThrough', 'cacheHit', 'portkey');
    const all = pick('direct', 'pipe', 'stored', 'passThrough', 'cacheHit', 'portkey', 'directMessages', 'storedMessages');
    await primeCache(contenders.find((c) => c.id === 'cacheHit')!);
    const dynamoRss = dynamoPid ? sampleRss(dynamoPid, 250) : undefined;
    const dynamoIdle = dynamoPid ? memoryMb(dynamoPid).rss : 0;

    process.stdout.write('one store call…\n');
    const tokenParts = /^sk-proxy-([a-z0-9]+)_([a-z0-9]+)_/.exec(proxy.token);
    const store = await measureStoreCall(
      dynamo.endpoint,
      { accounts: `${proxy.tablePrefix}accounts`, rateLimits: `${proxy.tablePrefix}rate-limits`, accountId: tokenParts?.[1] ?? 'unknown', tokenId: `${tokenParts?.[1]}_${tokenParts?.[2]}` },
      ITERATIONS.storeCallsPerRound,
    );
    const cpuPerCall = store.cpuMsPerCall;
    process.stdout.write(
      `  GetItem p50 ${store.latency.p50.toFixed(2)} ms, pre-upstream wave p50 ${store.preUpstreamWave.p50.toFixed(2)} ms; CPU per call: proxy's client ${cpuPerCall.proxyClient.toFixed(3)} ms, SDK DocumentClient ${cpuPerCall.sdkDocumentClient.toFixed(3)} ms, ` +
        `SDK low-level + cached middleware ${cpuPerCall.sdkLowLevelCachedMiddleware.toFixed(3)} ms, bare HTTP ${cpuPerCall.bareHttp.toFixed(3)} ms\n`,
    );
    process.stdout.write('non-streaming, concurrency 1…\n');
    const c1 = await nonStreaming(load, all, ITERATIONS.c1);
    process.stdout.write(`non-streaming, concurrency 1, ${ITERATIONS.c1Paced.pauseMs} ms between requests…\n`);
    const c1Paced = await nonStreaming(load, main6, ITERATIONS.c1Paced);
    process.stdout.write('non-streaming, concurrency 16 (with CPU and memory)…\n');
    const c16 = await nonStreaming(load, main6, { ...ITERATIONS.c16, measureResources: { storePid: dynamoPid, proxyPids: new Set([proxy.pid]) } });
    process.stdout.write('streaming…\n');
    const streamC1 = await streaming(load, upstream, all, ITERATIONS.streamC1);
    const streamC8 = await streaming(load, upstream, main6, ITERATIONS.streamC8);
    process.stdout.write('throughput ramp…\n');
    const resources = c16.resources;
    const throughput = await throughputRamp(load, main6, ITERATIONS.ramp, (contender: Contender, mb: number) => {
      const entry = resources[contender.id];
      if (entry) entry.rssRampMaxMb = Math.max(entry.rssRampMaxMb ?? 0, mb);
    });
    if (dynamoPid && resources.stored?.storeCpuMsPerRequest !== undefined) {
      resources.dynamoDbLocal = { cpuMsPerRequest: resources.stored.storeCpuMsPerRequest, requestsMeasured: resources.stored.requestsMeasured, rssIdleMb: dynamoIdle, rssMaxMb: dynamoRss!.stop() };
    }
    process.stdout.write('store round trips per request…\n');
    const roundTrips = await measureRoundTrips({ upstream, counter, countedProxy, pipe, portkey, iterations: ITERATIONS.roundTrips, counterDelayMs: STORE_COUNTER_DELAY_MS });
    process.stdout.write('Lambda bundle import…\n');
    const coldStart = await measureColdStart(lambdaBundle, ITERATIONS.coldStartRuns);

    const stored = roundTrips.find((t) => t.mode === 'stored key')!;
    const cost = costPerMillion({
      upstreamSeconds: 3,
      // A Lambda instance serves one request at a time: the paced figure is the one it would see.
      proxyOverheadMs: Math.max(0, (c1Paced.figures.stored?.p50 ?? 0) - (c1Paced.figures.direct?.p50 ?? 0)),
      tailAfterResponseMs: stored.tailAfterResponseMs,
      writeUnitsPerRequest: stored.writeUnits,
      readUnitsPerRequest: stored.readUnits,
      responseBytes: Buffer.byteLength(await (await fetch(`${upstream.origin}/v1/chat/completions`, { method: 'POST', body: '{}' })).text()),
      coldStartsPerMillion: 1000,
      coldStartInitMs: coldStart.importMedianMs,
    });

    const figures: Omit<Results, 'budgets' | 'durationSeconds' | 'profile'> = {
      date: new Date().toISOString(),
      machine: machineDescription(),
      source,
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
      settings: {
        upstream: {
          json: `answers at once (latency ${JSON_SHAPE.latencyMs} ms), ${JSON_SHAPE.chunks}-word answer with usage (~0.6 KB)`,
          stream: `${STREAM_SHAPE.chunks + 2} events ${STREAM_SHAPE.chunkIntervalMs} ms apart, then usage (when asked) and [DONE]`,
        },
        iterations: {
          'c=1': rounds(ITERATIONS.c1),
          'c=1 paced': `${rounds(ITERATIONS.c1Paced)}, ${ITERATIONS.c1Paced.pauseMs} ms pause after each answer`,
          'c=16': rounds(ITERATIONS.c16),
          'streams c=1': rounds(ITERATIONS.streamC1),
          'streams c=8': rounds(ITERATIONS.streamC8),
          ramp: ITERATIONS.ramp.map((s) => `c=${s.concurrency} for ${s.durationMs / 1000} s`).join(', '),
          'store counting': `${ITERATIONS.roundTrips.warmup} + ${ITERATIONS.roundTrips.requests} sequential requests per mode, each store answer held ${STORE_COUNTER_DELAY_MS} ms`,
          'bundle import': `${ITERATIONS.coldStartRuns} fresh processes`,
        },
        contenders: {
          'direct call': 'the load generator calls the fake upstream itself',
          'bare pipe': 'node:http server piping to the upstream with a keep-alive agent (bench/pipe-proxy.ts)',
          'this proxy': 'dist/local/server.mjs with DynamoDB Local (in memory, its own java process), rate limit set out of reach; provider prov-b (chat completions)',
          Portkey: '@portkey-ai/gateway 1.15.2 (`build/start-server.js --headless`), provider openai with x-portkey-custom-host at the fake upstream',
        },
        notes: [
          'The load generator is its own Node process (node:http, keep-alive agent, closed loop): it never shares an event loop with a contender. All processes share the same 2 cores, so the c=16 and throughput figures include contention with DynamoDB Local and the load generator.',
          'Portkey needed two preloaded fixes to run here: listening on 127.0.0.1 only, and copying the headers of upstream SSE answers (its streaming path otherwise fails with "TypeError: immutable" under @hono/node-server ≥ 1.14.3, Portkey issues #1389/#1550). Its stream handler also waits 25 ms before the first event by design.',
        ],
      },
      dynamoRoundTrip: store.latency,
      preUpstreamWave: store.preUpstreamWave,
      storeCallCpuMs: store.cpuMsPerCall,
      latency: { c1: c1.figures, c1Paced: c1Paced.figures, c16: c16.figures },
      streaming: { c1: streamC1, c8: streamC8 },
      throughput,
      resources,
      roundTrips,
      coldStart,
      cost,
    };
    const budgets = judgeBudgets(figures);
    const wantProfile = process.env.BENCH_PROFILE === '1' || (process.env.BENCH_PROFILE !== '0' && budgets.some((b) => !b.met && /CPU|Added/.test(b.name)));
    const profile = wantProfile ? await profileProxy({ upstream, dynamoEndpoint: dynamo.endpoint, load, pipe, portkey }) : undefined;
    const results: Results = { ...figures, budgets, profile, durationSeconds: (performance.now() - started) / 1000 };

    writeFileSync(join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
    writeFileSync(join(ROOT, 'bench', 'RESULTS.md'), renderResults(results));
    process.stdout.write(`\n${summaryTable(results)}\n\n`);
    for (const b of budgets) process.stdout.write(`${b.met ? 'met   ' : 'MISSED'}  ${b.name}: ${b.measured} (target ${b.target})\n`);
    process.stdout.write('\nwrote bench/RESULTS.md and bench/results.json\n');
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

function rounds(r: { rounds: number; warmup: number; count: number }): string {
  return `${r.count} measured per contender in ${r.rounds} interleaved rounds (${r.warmup} warm-up before the first)`;
}

/** Stores the cache-hit contender's answer once and waits until it is served from the cache. */
async function primeCache(contender: Contender): Promise<void> {
  const spec = contender.spec(false);
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    await response.arrayBuffer();
    if (response.headers.get('x-proxy-cache') === 'HIT') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the cache never answered HIT for a repeated request with x-proxy-cache: true');
}

/**
 * `tsx bench/run.ts --render-only`: judges the budgets again and rewrites RESULTS.md from
 * results.json's figures (after a change to the report's layout or wording; no new measurement).
 */
function renderOnly(): void {
  const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Results;
  results.budgets = judgeBudgets(results);
  writeFileSync(join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(ROOT, 'bench', 'RESULTS.md'), renderResults(results));
  process.stdout.write(`${summaryTable(results)}\n\nrewrote bench/RESULTS.md from bench/results.json (run of ${results.date})\n`);
}

(process.argv.includes('--render-only') ? Promise.resolve().then(renderOnly) : main()).catch((error) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
