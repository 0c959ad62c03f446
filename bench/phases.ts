/**
 * The measuring phases. Each takes the running contenders and returns figures;
 * all loops are bounded by counts or deadlines.
 */
import type { Contender, ContenderId } from './contenders';
import type { UpstreamShape, BenchUpstream } from './fake-upstream';
import type { LoadClient } from './load-client';
import type { LatencyResult } from './load-protocol';
import { roundOrder, summariseRamp, type RampFigure, type RampStep, type RoundStep } from './ramp';
import { cpuMs, memoryMb, sampleRss } from './process-stats';
import type { LatencyFigures, ResourceTable, Resources, StoreYardstickFigures, StreamFigures } from './results';
import type { StoreSamples } from './store-call';
import { percentiles } from './stats';

export const JSON_SHAPE: UpstreamShape = { latencyMs: 0, chunks: 20, chunkIntervalMs: 0 };
export const STREAM_SHAPE: UpstreamShape = { latencyMs: 0, chunks: 10, chunkIntervalMs: 5 };

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function latencyFigures(result: LatencyResult, values = result.totalMs): Omit<LatencyFigures, 'roundP50s'> {
  return { ...percentiles(values), errors: result.errors, mismatches: result.mismatches };
}

/** Appends one round's result to the contender's running total. */
function merge(into: LatencyResult | undefined, round: LatencyResult): LatencyResult {
  if (!into) return { ...round, statuses: { ...round.statuses } };
  into.totalMs.push(...round.totalMs);
  into.firstByteMs.push(...round.firstByteMs);
  into.eventLagMs.push(...round.eventLagMs);
  into.errors += round.errors;
  into.mismatches += round.mismatches;
  into.firstError ??= round.firstError;
  into.elapsedMs += round.elapsedMs;
  for (const [status, n] of Object.entries(round.statuses)) into.statuses[status] = (into.statuses[status] ?? 0) + n;
  return into;
}

function ensureClean(contender: Contender, result: LatencyResult, what: string): void {
  if (result.errors || result.mismatches) {
    const statuses = Object.entries(result.statuses).map(([status, n]) => `${status}×${n}`).join(' ');
    process.stdout.write(`  ! ${contender.label} ${what}: ${result.errors} errors, ${result.mismatches} mismatches (${statuses}) ${result.firstError ?? ''}\n`);
  }
}

export interface Rounds {
  /** Contenders take turns this many times, so that a burst of outside load hits them all alike. */
  rounds: number;
  concurrency: number;
  /** Warm-up before a contender's first round (later rounds warm up with a few requests). */
  warmup: number;
  /** Measured requests per contender, over all rounds. */
  count: number;
  /** A pause after every answer (see LatencyJob.pauseMs). */
  pauseMs?: number;
}

/** The store yardstick's slot in every round of a phase (see store-call.ts). */
export interface YardstickSlot {
  sample(count: number, pauseMs?: number): Promise<StoreSamples>;
  /** GetItems and waves per round. */
  perRound: number;
}

export async function nonStreaming(
  load: LoadClient,
  contenders: Contender[],
  options: Rounds & { measureResources?: { storePid?: number; proxyPids: Set<number> }; yardstick?: YardstickSlot },
): Promise<{ figures: Partial<Record<ContenderId, LatencyFigures>>; resources: ResourceTable; yardstick?: StoreYardstickFigures }> {
  const results: Partial<Record<ContenderId, LatencyResult>> = {};
  const roundP50s = new Map<ContenderId, number[]>();
  const usage = new Map<ContenderId, { cpu: number; store: number; requests: number; idle: number; rss: number; rounds: number[]; wallMs: number }>();
  // DynamoDB Local's CPU while contenders that never call it run: its own idle work (JIT, GC, timers).
  const storeIdle = { cpu: 0, wallMs: 0 };
  const storePid = options.measureResources?.storePid;
  const perRound = Math.ceil(options.count / options.rounds);
  const store: StoreSamples & { waveRoundP50s: number[] } = { getItem: [], wave: [], waveBesideRowWrite: [], waveRoundP50s: [] };
  for (let round = 0; round < options.rounds; round++) {
    if (options.yardstick) {
      // The store alone, in the same round as the contenders: the budget's yardstick sees the same outside load.
      const samples = await options.yardstick.sample(options.yardstick.perRound, options.pauseMs);
      store.getItem.push(...samples.getItem);
      store.wave.push(...samples.wave);
      store.waveBesideRowWrite.push(...samples.waveBesideRowWrite);
      store.waveRoundP50s.push(percentiles(samples.wave).p50);
    }
    for (const contender of contenders) {
      const pid = options.measureResources ? contender.pid : undefined;
      const usesStore = pid !== undefined && storePid !== undefined && options.measureResources!.proxyPids.has(pid);
      const warmup = round === 0 ? options.warmup : Math.min(options.warmup, 2 * options.concurrency);
      const before = pid !== undefined ? { cpu: cpuMs(pid), store: usesStore ? cpuMs(storePid!) : 0, rss: memoryMb(pid).rss } : undefined;
      const idleBefore = options.measureResources && storePid !== undefined && !usesStore ? { cpu: cpuMs(storePid), at: performance.now() } : undefined;
      const startedAt = performance.now();
      const sampler = pid !== undefined ? sampleRss(pid) : undefined;
      const result = await load.latency({ spec: contender.spec(false), concurrency: options.concurrency, warmup, count: perRound, pauseMs: options.pauseMs });
      if (idleBefore) {
        storeIdle.cpu += cpuMs(storePid!) - idleBefore.cpu;
        storeIdle.wallMs += performance.now() - idleBefore.at;
      }
      results[contender.id] = merge(results[contender.id], result);
      roundP50s.set(contender.id, [...(roundP50s.get(contender.id) ?? []), percentiles(result.totalMs).p50]);
      if (pid !== undefined && before) {
        // Rows are written just after each answer: let the last ones land before reading the CPU counters.
        await settle(250);
        const entry = usage.get(contender.id) ?? { cpu: 0, store: 0, requests: 0, idle: before.rss, rss: 0, rounds: [], wallMs: 0 };
        entry.wallMs += performance.now() - startedAt;
        const used = cpuMs(pid) - before.cpu;
        entry.cpu += used;
        entry.rounds.push(used / (warmup + perRound));
        if (usesStore) entry.store += cpuMs(storePid!) - before.store;
        entry.requests += warmup + perRound;
        entry.rss = Math.max(entry.rss, sampler!.stop());
        usage.set(contender.id, entry);
      }
    }
  }
  const figures: Partial<Record<ContenderId, LatencyFigures>> = {};
  const resources: ResourceTable = {};
  const paced = options.pauseMs ? `, ${options.pauseMs} ms apart` : '';
  const idleRate = storeIdle.wallMs > 0 ? storeIdle.cpu / storeIdle.wallMs : 0;
  for (const contender of contenders) {
    const result = results[contender.id]!;
    ensureClean(contender, result, `c=${options.concurrency}`);
    const f = (figures[contender.id] = { ...latencyFigures(result), roundP50s: roundP50s.get(contender.id) ?? [] });
    const u = usage.get(contender.id);
    let cpuText = '';
    if (u) {
      const usesStore = storePid !== undefined && options.measureResources!.proxyPids.has(contender.pid!);
      const entry: Resources = {
        cpuMsPerRequest: u.cpu / u.requests,
        roundCpuMsPerRequest: u.rounds,
        requestsMeasured: u.requests,
        rssIdleMb: u.idle,
        rssMaxMb: u.rss,
        ...(usesStore ? { storeCpuMsPerRequest: Math.max(0, u.store - idleRate * u.wallMs) / u.requests, storeGrossCpuMsPerRequest: u.store / u.requests } : {}),
      };
      resources[contender.id] = entry;
      cpuText = `  CPU ${entry.cpuMsPerRequest.toFixed(3)} ms/req` + (entry.storeCpuMsPerRequest !== undefined ? ` (+ store ${entry.storeCpuMsPerRequest.toFixed(3)})` : '');
    }
    process.stdout.write(`  ${contender.label.padEnd(42)} c=${options.concurrency}${paced} p50 ${f.p50.toFixed(2)} ms  p99 ${f.p99.toFixed(2)} ms${cpuText}\n`);
  }
  const stored = resources.stored;
  if (storePid !== undefined && stored?.storeCpuMsPerRequest !== undefined) {
    const rss = memoryMb(storePid).rss;
    resources.dynamoDbLocal = {
      cpuMsPerRequest: stored.storeCpuMsPerRequest,
      storeGrossCpuMsPerRequest: stored.storeGrossCpuMsPerRequest,
      storeIdleCpuMsPerSecond: idleRate * 1000,
      roundCpuMsPerRequest: [],
      requestsMeasured: stored.requestsMeasured,
      rssIdleMb: rss,
      rssMaxMb: rss,
    };
  }
  if (!options.yardstick) return { figures, resources };
  const yardstick: StoreYardstickFigures = {
    getItem: percentiles(store.getItem),
    wave: percentiles(store.wave),
    waveBesideRowWrite: percentiles(store.waveBesideRowWrite),
    waveRoundP50s: store.waveRoundP50s,
  };
  process.stdout.write(`  ${'store alone (yardstick)'.padEnd(42)} c=1${paced} GetItem p50 ${yardstick.getItem.p50.toFixed(2)} ms  wave p50 ${yardstick.wave.p50.toFixed(2)} ms\n`);
  return { figures, resources, yardstick };
}

export async function streaming(load: LoadClient, upstream: BenchUpstream, contenders: Contender[], options: Rounds): Promise<Partial<Record<ContenderId, StreamFigures>>> {
  upstream.setShape(STREAM_SHAPE);
  const results: Partial<Record<ContenderId, LatencyResult>> = {};
  const roundP50s = new Map<ContenderId, number[]>();
  const perRound = Math.ceil(options.count / options.rounds);
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const contender of contenders) {
        const warmup = round === 0 ? options.warmup : Math.min(options.warmup, options.concurrency);
        const result = await load.latency({ spec: contender.spec(true), concurrency: options.concurrency, warmup, count: perRound });
        results[contender.id] = merge(results[contender.id], result);
        roundP50s.set(contender.id, [...(roundP50s.get(contender.id) ?? []), percentiles(result.firstByteMs).p50]);
      }
    }
  } finally {
    upstream.setShape(JSON_SHAPE);
  }
  const out: Partial<Record<ContenderId, StreamFigures>> = {};
  for (const contender of contenders) {
    const result = results[contender.id]!;
    ensureClean(contender, result, `stream c=${options.concurrency}`);
    const readStamps = contender.spec(true).readStamps;
    const figures: StreamFigures = {
      firstByte: { ...latencyFigures(result, result.firstByteMs), roundP50s: roundP50s.get(contender.id) ?? [] },
      total: percentiles(result.totalMs),
      ...(readStamps ? { eventLag: percentiles(result.eventLagMs) } : {}),
    };
    out[contender.id] = figures;
    const lag = figures.eventLag;
    process.stdout.write(
      `  ${contender.label.padEnd(42)} stream c=${options.concurrency} first byte p50 ${figures.firstByte.p50.toFixed(2)} ms` +
        (lag ? `  event lag p50 ${lag.p50.toFixed(3)} p99 ${lag.p99.toFixed(3)} ms` : '') +
        '\n',
    );
  }
  return out;
}

export type RampFigures = Partial<Record<ContenderId, RampFigure>>;

/**
 * Throughput in rounds (ramp.ts): in each round every step is taken by every contender in turn; a
 * contender's figure is the median of its rounds' best steps with zero errors.
 */
export async function throughputRamp(
  load: LoadClient,
  contenders: Contender[],
  ramp: { rounds: number; steps: RampStep[] },
  rssFor: (contender: Contender, mb: number) => void,
): Promise<RampFigures> {
  const byContender = new Map<ContenderId, RoundStep[]>(contenders.map((contender) => [contender.id, []]));
  for (let round = 0; round < ramp.rounds; round++) {
    for (const step of ramp.steps) {
      for (const contender of roundOrder(contenders, round)) {
        const rss = contender.pid !== undefined ? sampleRss(contender.pid) : undefined;
        const result = await load.throughput({ spec: contender.spec(false), steps: [step] });
        if (rss) rssFor(contender, rss.stop());
        byContender.get(contender.id)!.push(...result.steps.map((measured) => ({ ...measured, round })));
      }
    }
  }
  const out: RampFigures = {};
  for (const contender of contenders) {
    const figure = summariseRamp(byContender.get(contender.id)!, ramp.rounds);
    out[contender.id] = figure;
    const errors = figure.steps.filter((step) => step.errors > 0).map((step) => `round ${step.round + 1} c=${step.concurrency}: ${step.errors}`);
    process.stdout.write(
      `  ${contender.label.padEnd(42)} max ${figure.maxRps.toFixed(0)} req/s (rounds ${figure.roundMaxRps.map((rps) => rps.toFixed(0)).join(', ')})` +
        `${errors.length ? `  ! errors ${errors.join('; ')}` : ''}\n`,
    );
  }
  return out;
}
