/**
 * `npm run bench`: starts every contender on loopback, measures them in one run against the
 * same fake upstream, prints the summary table and writes bench/results.json, RESULTS.md,
 * FINDINGS.md and the README's performance section from it (bench/outputs.ts).
 * - BENCH_QUICK=1 (`npm run bench:quick`): small counts, for trying the harness; marked as such.
 * - BENCH_ONLY=portkey (or stored, pipe, …; comma-separated): only those contenders and the
 *   direct call, written to bench/out/; the committed outputs are left alone.
 * - BENCH_PROFILE=1 always profiles the proxy, BENCH_PROFILE=0 never does; by default a full
 *   run profiles it when a CPU or latency budget is missed.
 * - `--render-only` (`npm run bench:render`): rewrites the outputs from results.json.
 * How each figure is taken: bench/METHOD.md.
 */
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { judgeBudgets } from './budgets';
import { measureColdStart } from './cold-start';
import { RESPONSES_CONTENDERS, buildContenders, primeCache, type Contender, type ContenderId } from './contenders';
import { costInputsOf } from './cost-inputs';
import { costPerMillion, MONTHLY_REQUESTS, rowsPerBatchAt } from './cost-model';
import { measureConsumerBatches } from './consumer-batch';
import { startBenchUpstream } from './fake-upstream';
import { startLoadClient } from './load-client';
import { OUTPUTS, RESULTS_JSON, finishResults, writeOutputs, type Measured } from './outputs';
import { JSON_SHAPE, STREAM_SHAPE, nonStreaming, streaming, throughputRamp } from './phases';
import { findDynamoDbLocalPid, machineDescription, memoryMb, sampleRss, sourceDescription } from './process-stats';
import { LAMBDA_BUNDLE, LOCAL_SERVER_NODE_FLAGS, ROOT, SERVER_BUNDLE, startPipeProxy, startPortkey, startProxyServer, type Child } from './processes';
import { summaryTable } from './report';
import type { Results } from './results';
import { pinnedPhase } from './pinned';
import { measureRoundTrips, profileProxy, runDisconnects } from './run-extras';
import { percentiles } from './stats';
import { openStoreYardstick } from './store-call';
import { startStoreCounter } from './store-counter';

/** Held on every counted store answer, so that parallel and sequential calls can be told apart. */
const STORE_COUNTER_DELAY_MS = 20;

/** BENCH_QUICK=1: a smoke run (a minute or two) that exercises every phase with small counts. */
const QUICK = process.env.BENCH_QUICK === '1';

const ITERATIONS = QUICK
  ? {
      c1: { rounds: 2, concurrency: 1, warmup: 10, count: 40 },
      c1Paced: { rounds: 2, concurrency: 1, warmup: 5, count: 30, pauseMs: 20 },
      c16: { rounds: 2, concurrency: 16, warmup: 32, count: 200 },
      streamC1: { rounds: 2, concurrency: 1, warmup: 2, count: 8 },
      streamC16: { rounds: 2, concurrency: 16, warmup: 16, count: 32 },
      ramp: { rounds: 2, steps: [8, 32].map((concurrency) => ({ concurrency, durationMs: 500 })) },
      roundTrips: { warmup: 1, requests: 3 },
      consumerBatches: { warmup: 3, batches: 10 },
      yardstickPerRound: 10,
      storeCpu: { callsPerRound: 20, rounds: 2 },
      coldStoreSamples: 20,
      coldStartRuns: 3,
      disconnects: { clients: 100, concurrency: 8, batch: 25, maxRestarts: 3, maxDropDelayMs: 40 },
      pinned: { rounds: 2, concurrency: 16, warmup: 32, count: 200, steps: [16, 64].map((concurrency) => ({ concurrency, durationMs: 500 })), rampRounds: 2 },
    }
  : {
      c1: { rounds: 5, concurrency: 1, warmup: 100, count: 500 },
      c1Paced: { rounds: 8, concurrency: 1, warmup: 20, count: 800, pauseMs: 20 },
      c16: { rounds: 5, concurrency: 16, warmup: 200, count: 2000 },
      streamC1: { rounds: 4, concurrency: 1, warmup: 8, count: 240 },
      streamC16: { rounds: 4, concurrency: 16, warmup: 32, count: 320 },
      ramp: { rounds: 3, steps: [8, 32, 96].map((concurrency) => ({ concurrency, durationMs: 2000 })) },
      roundTrips: { warmup: 2, requests: 15 },
      consumerBatches: { warmup: 10, batches: 60 },
      yardstickPerRound: 40,
      storeCpu: { callsPerRound: 100, rounds: 5 },
      coldStoreSamples: 40,
      coldStartRuns: 10,
      disconnects: { clients: 400, concurrency: 8, batch: 25, maxRestarts: 3, maxDropDelayMs: 40 },
      pinned: { rounds: 3, concurrency: 16, warmup: 100, count: 3000, steps: [16, 64].map((concurrency) => ({ concurrency, durationMs: 1500 })), rampRounds: 3 },
    };

/** Upstream during the disconnect phase: JSON answers wait a little, so clients can leave before the headers. */
const DISCONNECT_SHAPE = { latencyMs: 20, chunks: 10, chunkIntervalMs: 5 };

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const source = sourceDescription();
  const only = process.env.BENCH_ONLY ? (process.env.BENCH_ONLY.split(',').map((id) => id.trim()) as ContenderId[]) : undefined;
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

    process.stdout.write(`${QUICK ? 'QUICK RUN (BENCH_QUICK=1): small counts, figures not to quote. ' : ''}starting the fake upstream, DynamoDB Local, the contenders and the load generator…\n`);
    const upstream = await startBenchUpstream(JSON_SHAPE);
    cleanups.push(() => upstream.close());
    const dynamo = await startDynamoDbLocal();
    cleanups.push(() => dynamo.stop());
    const dynamoPid = findDynamoDbLocalPid(Number(new URL(dynamo.endpoint).port));
    const dynamoRss = dynamoPid ? sampleRss(dynamoPid, 250) : undefined;
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
    const pick = (...ids: ContenderId[]) => ids.filter((id) => !only || id === 'direct' || only.includes(id)).map((id) => contenders.find((c) => c.id === id)!);
    const main6 = pick('direct', 'pipe', 'stored', 'passThrough', 'cacheHit', 'portkey');
    const all = pick('direct', 'pipe', 'stored', 'passThrough', 'cacheHit', 'portkey', 'directMessages', 'storedMessages');
    // The Responses API stream beside the chat stream (its direct call is its baseline, so it comes with it).
    const responses = !only || only.includes('storedResponses') ? contenders.filter((c) => RESPONSES_CONTENDERS.includes(c.id)) : [];
    if (main6.some((c) => c.id === 'cacheHit')) await primeCache(contenders.find((c) => c.id === 'cacheHit')!);
    const dynamoIdle = dynamoPid ? memoryMb(dynamoPid).rss : 0;

    // The yardstick makes the proxy's own store calls on the proxy's own items (see store-call.ts).
    const store = openStoreYardstick(dynamo.endpoint, { tablePrefix: proxy.tablePrefix, token: proxy.token, dataDir: join(work, 'yardstick') });
    cleanups.push(async () => store.close());
    // Cold: the first calls on a fresh DynamoDB Local and a fresh client, as the old single yardstick was taken.
    const coldSamples = await store.sample(ITERATIONS.coldStoreSamples);
    const cold = { getItem: percentiles(coldSamples.getItem), wave: percentiles(coldSamples.wave) };
    process.stdout.write(`store alone, cold: GetItem p50 ${cold.getItem.p50.toFixed(2)} ms, pre-upstream wave p50 ${cold.wave.p50.toFixed(2)} ms\n`);
    const yardstick = { sample: store.sample, perRound: ITERATIONS.yardstickPerRound };
    const proxyPids = new Set([proxy.pid]);

    process.stdout.write('non-streaming, concurrency 1, store yardstick in every round…\n');
    const c1 = await nonStreaming(load, all, { ...ITERATIONS.c1, yardstick });
    process.stdout.write(`non-streaming, concurrency 1, ${ITERATIONS.c1Paced.pauseMs} ms between requests (with CPU), store yardstick in every round…\n`);
    const c1Paced = await nonStreaming(load, main6, { ...ITERATIONS.c1Paced, yardstick, measureResources: { storePid: dynamoPid, proxyPids } });
    process.stdout.write('non-streaming, concurrency 16 (with CPU and memory)…\n');
    const c16 = await nonStreaming(load, main6, { ...ITERATIONS.c16, measureResources: { storePid: dynamoPid, proxyPids } });
    process.stdout.write('streaming, concurrency 1 and 16…\n');
    const streamC1 = await streaming(load, upstream, [...all, ...responses], ITERATIONS.streamC1);
    const streamC16 = await streaming(load, upstream, [...main6, ...responses], ITERATIONS.streamC16);
    process.stdout.write('throughput ramp…\n');
    const resources = { c1Paced: c1Paced.resources, c16: c16.resources };
    const throughput = await throughputRamp(load, main6, ITERATIONS.ramp, (contender: Contender, mb: number) => {
      const entry = resources.c16[contender.id];
      if (entry) entry.rssRampMaxMb = Math.max(entry.rssRampMaxMb ?? 0, mb);
    });
    process.stdout.write('clients leaving mid-request…\n');
    const disconnects = await runDisconnects({ load, upstream, dynamoEndpoint: dynamo.endpoint, serverBundle, pipeScript, pipe, portkey, only, shape: DISCONNECT_SHAPE, options: ITERATIONS.disconnects });
    // After every phase that shares the cores; it restores each process's affinity when it ends.
    process.stdout.write('pinned: each contender alone on one CPU, the store, the load and the upstream on the other…\n');
    const pinned = await pinnedPhase(load, pick('direct', 'pipe', 'stored', 'passThrough', 'portkey'), {
      otherPids: [process.pid, load.pid, countedProxy.pid, proxy.pid, pipe.pid, portkey.pid],
      storePid: dynamoPid,
      storeUsers: proxyPids,
    }, ITERATIONS.pinned);
    if (only) {
      const out = join(ROOT, 'bench', 'out');
      mkdirSync(out, { recursive: true });
      const file = join(out, `only-${only.join('-')}.json`);
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), source, quick: QUICK, latency: { c1: c1.figures, c1Paced: c1Paced.figures, c16: c16.figures }, yardstick: { cold, c1: c1.yardstick, c1Paced: c1Paced.yardstick }, streaming: { c1: streamC1, c16: streamC16 }, throughput, resources, pinned, disconnects }, null, 2) + '\n');
      process.stdout.write(`\nBENCH_ONLY: wrote ${relative(ROOT, file)}; bench/results.json, RESULTS.md, FINDINGS.md and the README are untouched\n`);
      return;
    }
    process.stdout.write('client CPU of one store call…\n');
    const storeCallCpu = await store.clientCpu(ITERATIONS.storeCpu.callsPerRound, ITERATIONS.storeCpu.rounds);
    process.stdout.write('store round trips per request…\n');
    const roundTrips = await measureRoundTrips({ upstream, counter, countedProxy, pipe, portkey, iterations: ITERATIONS.roundTrips, counterDelayMs: STORE_COUNTER_DELAY_MS });
    process.stdout.write('stream consumer batches…\n');
    const consumerBatch = await measureConsumerBatches(dynamo.endpoint, { rowsPerBatch: Math.round(rowsPerBatchAt(MONTHLY_REQUESTS)), ...ITERATIONS.consumerBatches });
    process.stdout.write('Lambda bundle import…\n');
    const coldStart = await measureColdStart(lambdaBundle, ITERATIONS.coldStartRuns);
    if (dynamoPid && resources.c16.dynamoDbLocal) Object.assign(resources.c16.dynamoDbLocal, { rssIdleMb: dynamoIdle, rssMaxMb: dynamoRss!.stop() });

    const responseBytes = Buffer.byteLength(await (await fetch(`${upstream.origin}/v1/chat/completions`, { method: 'POST', body: '{}' })).text());
    const cost = costPerMillion(costInputsOf({ latency: { c1: c1.figures, c1Paced: c1Paced.figures, c16: c16.figures }, roundTrips, resources, coldStart, consumerBatch }, responseBytes));

    const figures: Measured = {
      date: new Date().toISOString(),
      machine: machineDescription(),
      source,
      quick: QUICK,
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
      settings: {
        upstream: {
          json: `answers at once (latency ${JSON_SHAPE.latencyMs} ms), ${JSON_SHAPE.chunks}-word answer with usage (~0.6 KB)`,
          stream: `${STREAM_SHAPE.chunks + 2} events ${STREAM_SHAPE.chunkIntervalMs} ms apart, then usage (when asked) and [DONE]; a Responses API stream: ${STREAM_SHAPE.chunks + 6} events ${STREAM_SHAPE.chunkIntervalMs} ms apart (4 opening, ${STREAM_SHAPE.chunks} text deltas, 2 closing with usage)`,
        },
        iterations: {
          'c=1': rounds(ITERATIONS.c1),
          'c=1 paced': `${rounds(ITERATIONS.c1Paced)}, ${ITERATIONS.c1Paced.pauseMs} ms pause after each answer`,
          'c=16': rounds(ITERATIONS.c16),
          'streams c=1': rounds(ITERATIONS.streamC1),
          'streams c=16': rounds(ITERATIONS.streamC16),
          'store yardstick': `${ITERATIONS.coldStoreSamples} GetItems and waves cold at the start; ${ITERATIONS.yardstickPerRound} of each warm in every round of the two c=1 phases`,
          ramp: `${ITERATIONS.ramp.rounds} rounds of ${ITERATIONS.ramp.steps.map((s) => `c=${s.concurrency} for ${s.durationMs / 1000} s`).join(', ')}, each step taken by every contender in turn`,
          'stream consumer': `${ITERATIONS.consumerBatches.warmup} + ${ITERATIONS.consumerBatches.batches} batches of the rows 1 million requests a month gather in the batching window, one at a time, folded into DynamoDB Local`,
          'store counting': `${ITERATIONS.roundTrips.warmup} + ${ITERATIONS.roundTrips.requests} sequential requests per mode, each store answer held ${STORE_COUNTER_DELAY_MS} ms`,
          disconnects: `${ITERATIONS.disconnects.clients} clients per contender at c=${ITERATIONS.disconnects.concurrency}, in batches of ${ITERATIONS.disconnects.batch}; upstream JSON after ${DISCONNECT_SHAPE.latencyMs} ms, streams of ${DISCONNECT_SHAPE.chunks + 2} events ${DISCONNECT_SHAPE.chunkIntervalMs} ms apart`,
          'bundle import': `${ITERATIONS.coldStartRuns} fresh processes`,
          pinned: `${rounds(ITERATIONS.pinned)} at c=${ITERATIONS.pinned.concurrency}, then ${ITERATIONS.pinned.rampRounds} rounds of ${ITERATIONS.pinned.steps.map((s) => `c=${s.concurrency} for ${s.durationMs / 1000} s`).join(', ')}; the contender alone on one CPU, everything else on the other (taskset)`,
        },
        contenders: {
          'direct call': 'the load generator calls the fake upstream itself',
          'bare pipe': 'node:http server piping to the upstream with a keep-alive agent (bench/pipe-proxy.ts)',
          'this proxy': `dist/local/server.mjs started as npm start starts it (node ${LOCAL_SERVER_NODE_FLAGS.join(' ')}), with DynamoDB Local (in memory, its own java process), rate limit set out of reach; provider prov-b (chat completions)`,
          Portkey: '@portkey-ai/gateway 1.15.2 (`build/start-server.js --headless`), provider openai with x-portkey-custom-host at the fake upstream',
        },
        notes: [
          'The load generator is its own Node process (node:http, keep-alive agent, closed loop): it never shares an event loop with a contender. All processes share the same cores, so the c=16 and throughput figures include contention with DynamoDB Local and the load generator.',
          'Portkey needed two preloaded fixes to run here: listening on 127.0.0.1 only, and copying the headers of upstream SSE answers (its streaming path otherwise fails with "TypeError: immutable" under @hono/node-server ≥ 1.14.3, Portkey issues #1389/#1550). Its stream handler also waits 25 ms before the first event by design.',
        ],
      },
      yardstick: { cold, c1: c1.yardstick!, c1Paced: c1Paced.yardstick! },
      storeCallCpuMs: storeCallCpu,
      latency: { c1: c1.figures, c1Paced: c1Paced.figures, c16: c16.figures },
      streaming: { c1: streamC1, c16: streamC16 },
      throughput,
      resources,
      pinned,
      disconnects,
      roundTrips,
      consumerBatch,
      coldStart,
      cost,
    };
    const budgets = judgeBudgets(figures);
    const wantProfile = process.env.BENCH_PROFILE === '1' || (!QUICK && process.env.BENCH_PROFILE !== '0' && budgets.some((b) => !b.met && /CPU|Added/.test(b.name)));
    const profile = wantProfile ? await profileProxy({ upstream, dynamoEndpoint: dynamo.endpoint, load, pipe, portkey }) : undefined;
    const results = finishResults({ ...figures, profile, durationSeconds: (performance.now() - started) / 1000 });
    writeOutputs(results);
    process.stdout.write(`\n${summaryTable(results)}\n\n`);
    const y = results.yardstick;
    process.stdout.write(
      `store alone (the budgets' yardstick), p50: wave cold ${y.cold.wave.p50.toFixed(2)} ms, warm ${y.c1.wave.p50.toFixed(2)} ms back to back and ${y.c1Paced.wave.p50.toFixed(2)} ms paced; ` +
        `GetItem cold ${y.cold.getItem.p50.toFixed(2)} ms, warm ${y.c1.getItem.p50.toFixed(2)} / ${y.c1Paced.getItem.p50.toFixed(2)} ms\n\n`,
    );
    for (const b of results.budgets) process.stdout.write(`${b.met ? 'met   ' : 'MISSED'}  ${b.name}: ${b.measured} (target ${b.target})\n`);
    process.stdout.write(`\nwrote ${OUTPUTS.join(', ')}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

function rounds(r: { rounds: number; warmup: number; count: number }): string {
  return `${r.count} measured per contender in ${r.rounds} interleaved rounds (${r.warmup} warm-up before the first)`;
}


/**
 * `npm run bench:render`: judges the budgets and derives the headline again from results.json's
 * measured figures, then rewrites RESULTS.md, FINDINGS.md and the README's performance section
 * (after a change to a report's layout or wording; no new measurement).
 */
function renderOnly(): void {
  const results = finishResults(JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results);
  writeOutputs(results);
  process.stdout.write(`${summaryTable(results)}\n\nrewrote ${OUTPUTS.join(', ')} from the run of ${results.date} (commit ${results.source.commit})\n`);
}

(process.argv.includes('--render-only') ? Promise.resolve().then(renderOnly) : main())
  .catch((error) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
    process.exitCode = 1;
  })
  // Every process it started is stopped by then; a client's idle keep-alive socket must not keep the run waiting.
  .finally(() => process.exit());
