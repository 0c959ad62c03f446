/**
 * `npm run bench`: starts the contenders on loopback beside one provider stand-in and DynamoDB
 * Local, measures them in interleaved rounds (bench/METHOD.md), and writes bench/results.json
 * with every round's figures, then bench/RESULTS.md from it. `BENCH_QUICK=1` shrinks the counts
 * and writes to bench/out/ instead.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { tableNames } from '../lambda/store/tables';
import { DEFAULTS } from '../lib/settings';
import { coldImports } from './cold-import';
import { cpuQuota, type CpuQuota } from './cpu-quota';
import { storeRoundTrips } from './store-round-trip';
import type { LoadJob, LoadResult } from './load';
import {
  COLD_IMPORTS_PER_ROUND,
  LABELS,
  PHASES,
  QUICK,
  ROUNDS,
  STORE_ROUND_TRIPS,
  UPSTREAM,
  type ContenderId,
  type Phase,
  type Results,
  type Round,
  type Slot,
} from './plan';
import {
  LAMBDA_BUNDLE,
  ROOT,
  cpuMs,
  javaPid,
  peakRssMb,
  source,
  startLoad,
  startPipe,
  startPortkey,
  startProxy,
  type Load,
} from './processes';
import { renderResults } from './report';
import { median, percentile, round3 } from './stats';
import { startUpstream } from './upstream';

/** The key a caller holds for itself; the stand-in provider accepts any. */
const OWN_KEY = 'sk-bench-own-key-0123456789abcdef';

/** A small real prompt (about 0.5 KB); the cache-hit contender's has its own words, so only its priming call writes the entry. */
function chatBody(stream: boolean, salt = ''): string {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant. Answer in one short paragraph without lists.' },
      {
        role: 'user',
        content: `Summarise why a proxy in front of an AI provider should add as little latency as possible.${salt}`,
      },
    ],
    max_tokens: 256,
    temperature: 0.2,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

type Request = Pick<LoadJob, 'url' | 'headers' | 'body' | 'expectHeader' | 'headerSets'>;
interface Contender {
  /** The process whose CPU is the contender's (none for the direct call). */
  pid?: number;
  request(stream: boolean): Request;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stdout.write(`${line}\n`);

/** A round's order: the contenders rotated by one per round, so none always goes first or last. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

function slotFigures(phase: Phase, result: LoadResult, cpu: number | undefined, dynamoCpu: number): Slot {
  const sent = result.totalMs.length + result.errors;
  const stream = result.lagMs.length > 0;
  const windowed = phase.durationS !== undefined && result.answeredInWindow !== undefined;
  return {
    answered: result.totalMs.length,
    errors: result.errors,
    ...(result.firstError ? { firstError: result.firstError } : {}),
    elapsedMs: round3(result.elapsedMs),
    rps: windowed
      ? round3(result.answeredInWindow! / phase.durationS!)
      : round3((result.totalMs.length * 1000) / result.elapsedMs),
    ...(windowed ? { answeredInWindow: result.answeredInWindow } : {}),
    p50: round3(percentile(result.totalMs, 50)),
    p90: round3(percentile(result.totalMs, 90)),
    p99: round3(percentile(result.totalMs, 99)),
    firstByteP50: round3(percentile(result.firstByteMs, 50)),
    firstByteP99: round3(percentile(result.firstByteMs, 99)),
    ...(stream
      ? {
          lagP50: round3(percentile(result.lagMs, 50)),
          lagP99: round3(percentile(result.lagMs, 99)),
          gapP50: round3(percentile(result.gapMs, 50)),
          gapP99: round3(percentile(result.gapMs, 99)),
          gapMax: round3(Math.max(...result.gapMs)),
        }
      : {}),
    ...(cpu === undefined ? {} : { cpuMsPerRequest: round3(cpu / sent) }),
    dynamoCpuMsPerRequest: round3(dynamoCpu / sent),
  };
}

async function runSlot(
  load: Load,
  phase: Phase,
  contender: Contender,
  dynamoPid: number,
  quotas: ReadonlyMap<number, CpuQuota>,
): Promise<Slot> {
  const request = contender.request(phase.stream === true);
  // A Lambda-share phase holds the contender's process to its quota for its slot only.
  const quota = phase.lambdaShare ? quotas.get(phase.lambdaShare.periodMs * 1000) : undefined;
  const held = quota && contender.pid !== undefined ? contender.pid : undefined;
  if (held !== undefined) quota!.hold(held);
  const cpuBefore = contender.pid === undefined ? 0 : cpuMs(contender.pid);
  const dynamoBefore = cpuMs(dynamoPid);
  let result: LoadResult;
  try {
    result = await load.run({
      ...request,
      concurrency: phase.concurrency,
      count: phase.count,
      ...(phase.durationS ? { durationMs: phase.durationS * 1000 } : {}),
      ...(phase.pauseMs ? { pauseMs: phase.pauseMs } : {}),
      stream: phase.stream === true,
    });
    // The usage rows of the last answers are written after them: let them land inside the slot they belong to.
    await sleep(300);
  } finally {
    if (held !== undefined) quota!.release(held);
  }
  const cpu = contender.pid === undefined ? undefined : cpuMs(contender.pid) - cpuBefore;
  return slotFigures(phase, result, cpu, cpuMs(dynamoPid) - dynamoBefore);
}

/**
 * Sends the cache-hit contender's request until the proxy answers it from the cache (setup, not
 * measured), through the load runner itself: the cache key covers the request's headers, so the
 * entry must be stored from the very client, and headers, the measured requests come with.
 */
async function primeCache(load: Load, request: Request): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const result = await load.run({ ...request, concurrency: 1, count: 1 });
    if (result.errors === 0) return;
    await sleep(100);
  }
  throw new Error('the cache-hit request was never answered from the cache');
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = loadavg();
  const { commit, clean } = source();
  if (!QUICK && !clean) log('! the working tree differs from the commit: results.json will say clean: false');
  const upstream = await startUpstream(UPSTREAM);
  const dynamo = await startDynamoDbLocal();
  const dynamoPid = javaPid(new URL(dynamo.endpoint).port);
  const [proxy, pipe, portkey, load] = await Promise.all([
    startProxy(upstream.origin, dynamo.endpoint),
    startPipe(upstream.origin),
    startPortkey(),
    startLoad(),
  ]);
  const json = { 'content-type': 'application/json' };
  const chat = '/api/proxy/prov-b/v1/chat/completions';
  const contenders: Record<ContenderId, Contender> = {
    direct: {
      request: (stream) => ({
        url: `${upstream.origin}/v1/chat/completions`,
        headers: { ...json, authorization: `Bearer ${OWN_KEY}` },
        body: chatBody(stream),
      }),
    },
    pipe: {
      pid: pipe.pid,
      request: (stream) => ({
        url: `${pipe.url}/v1/chat/completions`,
        headers: { ...json, authorization: `Bearer ${OWN_KEY}` },
        body: chatBody(stream),
      }),
    },
    stored: {
      pid: proxy.pid,
      request: (stream) => ({
        url: proxy.url + chat,
        headers: { ...json, authorization: `Bearer ${proxy.token}` },
        body: chatBody(stream),
      }),
    },
    manyTokens: {
      pid: proxy.pid,
      request: (stream) => ({
        url: proxy.url + chat,
        headers: json,
        headerSets: proxy.tokens.map((token) => ({ authorization: `Bearer ${token}` })),
        body: chatBody(stream),
      }),
    },
    passThrough: {
      pid: proxy.pid,
      request: (stream) => ({
        url: proxy.url + chat,
        headers: { ...json, authorization: `Bearer ${OWN_KEY}`, 'x-proxy-token': proxy.token },
        body: chatBody(stream),
      }),
    },
    portkey: {
      pid: portkey.pid,
      request: (stream) => ({
        url: `${portkey.url}/v1/chat/completions`,
        headers: {
          ...json,
          authorization: `Bearer ${OWN_KEY}`,
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${upstream.origin}/v1`,
        },
        body: chatBody(stream),
      }),
    },
    cacheHit: {
      pid: proxy.pid,
      request: (stream) => ({
        url: proxy.url + chat,
        headers: { ...json, authorization: `Bearer ${proxy.token}`, 'x-proxy-cache': 'true' },
        body: chatBody(stream, ' (cached)'),
        expectHeader: ['x-proxy-cache', 'HIT'],
      }),
    },
  };
  const processes = { proxy: proxy.pid, pipe: pipe.pid, portkey: portkey.pid, dynamodbLocal: dynamoPid };
  // Lambda's CPU share at the default memory, one quota per period a phase asks for; skipped where the machine has no cgroup for it.
  const quotas = new Map<number, CpuQuota>();
  let unavailable: string | undefined;
  for (const periodMs of new Set(PHASES.flatMap((phase) => (phase.lambdaShare ? [phase.lambdaShare.periodMs] : [])))) {
    const share = cpuQuota(DEFAULTS.memoryMb, periodMs * 1000);
    if ('unavailable' in share) unavailable = share.unavailable;
    else quotas.set(share.periodUs, share);
  }
  if (unavailable) log(`! the Lambda-share phases are skipped: ${unavailable}`);
  const phases = PHASES.filter((phase) => !phase.lambdaShare || quotas.has(phase.lambdaShare.periodMs * 1000));
  const rounds: Round[] = [];
  try {
    await primeCache(load, contenders.cacheHit.request(false));
    for (let index = 0; index < ROUNDS; index++) {
      const order = rotate(
        ['direct', 'pipe', 'stored', 'manyTokens', 'passThrough', 'portkey', 'cacheHit'] as ContenderId[],
        index,
      );
      const round: Round = {
        index: index + 1,
        startedAt: new Date().toISOString(),
        loadStart: loadavg(),
        loadEnd: [],
        order,
        phases: {},
        peakRssMb: {},
        coldImportMs: [],
      };
      log(`round ${round.index} of ${ROUNDS} (load ${round.loadStart.map((value) => value.toFixed(2)).join(' ')})`);
      for (const phase of phases) {
        const slots: Partial<Record<ContenderId, Slot>> = {};
        for (const id of order.filter((candidate) => phase.contenders.includes(candidate))) {
          const slot = await runSlot(load, phase, contenders[id], dynamoPid, quotas);
          slots[id] = slot;
          const cpu = slot.cpuMsPerRequest === undefined ? '' : `, CPU ${slot.cpuMsPerRequest.toFixed(2)} ms/request`;
          log(
            `  ${phase.id.padEnd(6)} ${LABELS[id].padEnd(26)} p50 ${slot.p50.toFixed(2)} ms, p99 ${slot.p99.toFixed(2)} ms, ${slot.rps.toFixed(0)}/s${cpu}${slot.errors ? `, ${slot.errors} errors (${slot.firstError})` : ''}`,
          );
        }
        round.phases[phase.id] = slots;
      }
      round.storeRoundTripMs = await storeRoundTrips(
        dynamo.endpoint,
        tableNames({}, proxy.tablePrefix),
        STORE_ROUND_TRIPS,
      );
      const { getItem, gate } = round.storeRoundTripMs;
      log(
        `  store round trip: GetItem p50 ${getItem.p50.toFixed(2)} ms, p90 ${getItem.p90.toFixed(2)} ms; the gate's UpdateItem p50 ${gate.p50.toFixed(2)} ms, p90 ${gate.p90.toFixed(2)} ms`,
      );
      round.coldImportMs = (await coldImports(LAMBDA_BUNDLE, COLD_IMPORTS_PER_ROUND)).map(round3);
      log(`  cold import of the Lambda bundle: ${round.coldImportMs.map((ms) => ms.toFixed(0)).join(', ')} ms`);
      for (const [name, pid] of Object.entries(processes)) round.peakRssMb[name] = round3(peakRssMb(pid));
      round.loadEnd = loadavg();
      rounds.push(round);
    }
  } finally {
    load.stop();
    await Promise.all([proxy.stop(), pipe.stop(), portkey.stop()]);
    await dynamo.stop();
    await upstream.close();
    for (const quota of quotas.values()) quota.remove();
  }
  const results: Results = {
    quick: QUICK,
    commit,
    clean,
    startedAt: new Date(started).toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    node: process.version,
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGb: round3(totalmem() / 2 ** 30),
      os: `${type()} ${release()}`,
    },
    upstream: UPSTREAM,
    phases,
    lambdaBundleBytes: statSync(LAMBDA_BUNDLE).size,
    lambdaShare: unavailable
      ? { unavailable }
      : [...quotas.values()].map(({ memoryMb, quotaUs, periodUs }) => ({ memoryMb, quotaUs, periodUs })),
    loadStart,
    loadEnd: loadavg(),
    rounds,
  };
  const folder = QUICK ? join(ROOT, 'bench', 'out') : join(ROOT, 'bench');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(folder, 'RESULTS.md'), renderResults(results));
  const c1 = rounds.map((round) => round.phases.c1?.stored?.p50 ?? Number.NaN);
  log(
    `wrote ${join(folder, 'results.json')} and RESULTS.md in ${results.durationS} s (stored-key p50 at c=1, median of rounds: ${median(c1).toFixed(2)} ms)`,
  );
}

await main();
