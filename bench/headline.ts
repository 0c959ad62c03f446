/**
 * The figures the README quotes, derived from one run's measurements and stored in
 * results.json beside them, rounded as they are printed. The README's performance section is
 * rendered from these alone (bench/readme.ts), and a test checks that every number it quotes
 * is held by results.json: a figure cannot be typed in by hand or survive a new run.
 */
import type { Measured } from './outputs';
import type { Budget, LatencyFigures } from './results';
import { ownCoreCeiling, pinnedAddedP99 } from './pinned-reading';
import { sameRunRatio } from './ramp';
import { round } from './stats';

export interface Headline {
  /** The first 7 characters of the measured commit. */
  commit: string;
  clean: boolean;
  quick: boolean;
  date: string;
  cores: number;
  loadAtStart: number;
  /** Added p50 over the direct call, one request at a time (20 ms apart), and the spread of the per-round added p50s. */
  alone: { stored: number; passThrough: number; storedRoundMin: number; storedRoundMax: number };
  backToBack: { stored: number; passThrough: number };
  /** The store alone: pre-upstream wave and GetItem p50, warm (in the paced rounds) and cold (at the start). */
  store: { waveWarm: number; waveCold: number; getItemWarm: number; getItemCold: number; waveRoundMin: number; waveRoundMax: number };
  /** Added p50 alone minus the warm wave: the proxy's own share. */
  ownWorkAlone: number;
  cpuAlone: { stored: number; passThrough: number; portkey: number; pipe: number; dynamoDbLocal: number; dynamoDbLocalGross: number; storedRoundMin: number; storedRoundMax: number };
  cpuC16: { stored: number; portkey: number; pipe: number; dynamoDbLocal: number };
  /** Proxy CPU per request as a multiple of Portkey's, one at a time and at c=16. */
  cpuVsPortkey: { alone: number; c16: number };
  /** Added event lag p50 / p99 over the direct call, and added first byte p50. */
  stream: {
    c1: { lagP50: number; lagP99: number; portkeyLagP99: number; pipeLagP99: number };
    c16: { lagP50: number; lagP99: number; portkeyLagP99: number; pipeLagP99: number };
    firstByte: number;
    portkeyFirstByte: number;
  };
  /** Event lag p99 through this proxy (stored key): the Responses API stream and the chat stream, in the same phase. NaN (null in JSON) when not measured. */
  responsesStream: { c1: { p99: number; chatP99: number }; c16: { p99: number; chatP99: number } };
  cacheHitAlone: number;
  /** Medians of the ramp's rounds (`rounds`; 1 for a run from before rounds), the ratio the median of per-round ratios. */
  throughput: { stored: number; portkey: number; direct: number; storedVsPortkey: number; rounds: number };
  /**
   * The pinned phase (contender alone on one CPU, the rest of the rig on the other): added p99 at
   * c=16, max req/s, and what one CPU could serve at each one's own CPU per request. Null when the
   * run has no pinned figures (before the phase, or skipped).
   */
  pinned: { addedP99: { stored: number; portkey: number }; throughput: { stored: number; portkey: number }; perCoreCeiling: { stored: number; portkey: number } } | null;
  rss: { c16: number; before: number };
  disconnects: {
    clients: number;
    left: number;
    stayed: number;
    stayedErrors: number;
    crashes: number;
    survived: boolean;
    /** Counted only when the server survived (null otherwise). */
    rows: number | null;
    upstreamCalls: number | null;
  };
  bundle: { mb: number; importMs: number };
  cost: { memoryMb: number; upstreamSeconds: number; total: number; lambdaWait: number; at128: number };
  missed: Array<Pick<Budget, 'name' | 'measured' | 'target'>>;
}

const r2 = (value: number | undefined) => round(value ?? Number.NaN, 2);
const r3 = (value: number | undefined) => round(value ?? Number.NaN, 3);
const r0 = (value: number | undefined) => round(value ?? Number.NaN, 0);

const addedP50 = (figures: Partial<Record<string, LatencyFigures>>, id: string) => (figures[id] && figures.direct ? figures[id]!.p50 - figures.direct.p50 : Number.NaN);

/** Each round's added p50 (contender round p50 minus the direct call's in the same round). */
function roundAdded(figures: Partial<Record<string, LatencyFigures>>, id: string): number[] {
  const ours = figures[id]?.roundP50s ?? [];
  const base = figures.direct?.roundP50s ?? [];
  return ours.map((value, i) => value - (base[i] ?? Number.NaN)).filter(Number.isFinite);
}

export function computeHeadline(r: Measured, budgets: Budget[]): Headline {
  const alone = r.latency.c1Paced;
  const storedRounds = roundAdded(alone, 'stored');
  const wave = r.yardstick.c1Paced.wave;
  const waveRounds = r.yardstick.c1Paced.waveRoundP50s ?? [];
  const paced = r.resources.c1Paced;
  const c16 = r.resources.c16;
  const lag = (level: 'c1' | 'c16', id: string, at: 'p50' | 'p99') => {
    const figures = r.streaming[level] as Record<string, { eventLag?: { p50: number; p99: number } }>;
    const ours = figures[id]?.eventLag;
    const direct = figures.direct?.eventLag;
    return ours && direct ? ours[at] - direct[at] : Number.NaN;
  };
  const firstByte = (id: string) => {
    const s = r.streaming.c1 as Record<string, { firstByte: { p50: number } }>;
    return s[id] && s.direct ? s[id]!.firstByte.p50 - s.direct.firstByte.p50 : Number.NaN;
  };
  const stream = (level: 'c1' | 'c16') => ({
    lagP50: r3(lag(level, 'stored', 'p50')),
    lagP99: r2(lag(level, 'stored', 'p99')),
    portkeyLagP99: r2(lag(level, 'portkey', 'p99')),
    pipeLagP99: r2(lag(level, 'pipe', 'p99')),
  });
  const responsesLag = (level: 'c1' | 'c16') => {
    const figures = r.streaming[level] as Record<string, { eventLag?: { p99: number } } | undefined>;
    return { p99: r2(figures.storedResponses?.eventLag?.p99), chatP99: r2(figures.stored?.eventLag?.p99) };
  };
  const proxyDrops = r.disconnects.find((d) => d.id === 'stored');
  const kinds = proxyDrops ? Object.entries(proxyDrops.byKind) : [];
  const stayed = kinds.find(([kind]) => kind === 'complete')?.[1];
  const cost = r.cost;
  const waitLine = cost.lines.find((line) => line.item.startsWith('Lambda duration'));
  const upstreamSeconds = Number(/= (\d+(?:\.\d+)?) s upstream/.exec(waitLine?.basis ?? '')?.[1] ?? Number.NaN);
  return {
    commit: r.source.commit.slice(0, 7),
    clean: r.source.clean,
    quick: r.quick,
    date: r.date.slice(0, 10),
    cores: Number(r.machine.nproc),
    loadAtStart: r2(r.loadAverage.start),
    alone: {
      stored: r2(addedP50(alone, 'stored')),
      passThrough: r2(addedP50(alone, 'passThrough')),
      storedRoundMin: r2(Math.min(...storedRounds)),
      storedRoundMax: r2(Math.max(...storedRounds)),
    },
    backToBack: { stored: r2(addedP50(r.latency.c1, 'stored')), passThrough: r2(addedP50(r.latency.c1, 'passThrough')) },
    store: {
      waveWarm: r2(wave.p50),
      waveCold: r2(r.yardstick.cold.wave.p50),
      getItemWarm: r2(r.yardstick.c1Paced.getItem.p50),
      getItemCold: r2(r.yardstick.cold.getItem.p50),
      waveRoundMin: r2(Math.min(...waveRounds)),
      waveRoundMax: r2(Math.max(...waveRounds)),
    },
    ownWorkAlone: r2(addedP50(alone, 'stored') - wave.p50),
    cpuAlone: {
      stored: r2(paced.stored?.cpuMsPerRequest),
      passThrough: r2(paced.passThrough?.cpuMsPerRequest),
      portkey: r2(paced.portkey?.cpuMsPerRequest),
      pipe: r2(paced.pipe?.cpuMsPerRequest),
      dynamoDbLocal: r2(paced.dynamoDbLocal?.cpuMsPerRequest),
      dynamoDbLocalGross: r2(paced.dynamoDbLocal?.storeGrossCpuMsPerRequest),
      storedRoundMin: r2(Math.min(...(paced.stored?.roundCpuMsPerRequest ?? []))),
      storedRoundMax: r2(Math.max(...(paced.stored?.roundCpuMsPerRequest ?? []))),
    },
    cpuC16: {
      stored: r2(c16.stored?.cpuMsPerRequest),
      portkey: r2(c16.portkey?.cpuMsPerRequest),
      pipe: r2(c16.pipe?.cpuMsPerRequest),
      dynamoDbLocal: r2(c16.dynamoDbLocal?.cpuMsPerRequest),
    },
    cpuVsPortkey: {
      alone: r2((paced.stored?.cpuMsPerRequest ?? Number.NaN) / (paced.portkey?.cpuMsPerRequest ?? Number.NaN)),
      c16: r2((c16.stored?.cpuMsPerRequest ?? Number.NaN) / (c16.portkey?.cpuMsPerRequest ?? Number.NaN)),
    },
    stream: { c1: stream('c1'), c16: stream('c16'), firstByte: r2(firstByte('stored')), portkeyFirstByte: r2(firstByte('portkey')) },
    responsesStream: { c1: responsesLag('c1'), c16: responsesLag('c16') },
    cacheHitAlone: r2(alone.cacheHit?.p50),
    throughput: {
      stored: r0(r.throughput.stored?.maxRps),
      portkey: r0(r.throughput.portkey?.maxRps),
      direct: r0(r.throughput.direct?.maxRps),
      storedVsPortkey: r2(sameRunRatio(r.throughput.stored, r.throughput.portkey)),
      rounds: r.throughput.stored?.roundMaxRps?.length ?? 1,
    },
    pinned: pinnedHeadline(r),
    rss: {
      c16: r0(Math.max(c16.stored?.rssMaxMb ?? 0, c16.passThrough?.rssMaxMb ?? 0, c16.cacheHit?.rssMaxMb ?? 0)),
      before: r0(c16.stored?.rssIdleMb),
    },
    disconnects: {
      clients: proxyDrops?.clients ?? 0,
      left: kinds.filter(([kind]) => kind !== 'complete').reduce((sum, [, k]) => sum + k.dropped, 0),
      stayed: stayed?.sent ?? 0,
      stayedErrors: (stayed?.errors ?? 0) + (stayed?.refused ?? 0),
      crashes: proxyDrops?.crashes ?? 0,
      survived: proxyDrops?.survived ?? false,
      rows: proxyDrops?.rows ?? null,
      upstreamCalls: proxyDrops?.upstreamCalls ?? null,
    },
    bundle: { mb: r2(r.coldStart.bundleBytes / 1024 / 1024), importMs: r0(r.coldStart.importMedianMs) },
    cost: {
      memoryMb: cost.memoryMb,
      upstreamSeconds,
      total: r2(cost.totalUsdPerMillion),
      lambdaWait: r2(waitLine?.usdPerMillion),
      at128: r2(cost.byMemory.find((m) => m.memoryMb === 128)?.totalUsdPerMillion),
    },
    missed: budgets.filter((b) => !b.met).map(({ name, measured, target }) => ({ name, measured, target })),
  };
}

function pinnedHeadline(r: Measured): Headline['pinned'] {
  const p = r.pinned && !r.pinned.skipped ? r.pinned.contenders : undefined;
  if (!p?.stored || !p.portkey) return null;
  return {
    addedP99: { stored: r2(pinnedAddedP99(r, 'stored')), portkey: r2(pinnedAddedP99(r, 'portkey')) },
    throughput: { stored: r0(p.stored.throughput.maxRps), portkey: r0(p.portkey.throughput.maxRps) },
    perCoreCeiling: { stored: r0(ownCoreCeiling(p.stored)), portkey: r0(ownCoreCeiling(p.portkey)) },
  };
}
