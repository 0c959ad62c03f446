/**
 * What a run measures (bench/METHOD.md explains each choice) and the shape of results.json.
 * BENCH_QUICK=1 keeps every phase but shrinks the counts, to try the harness in a few minutes;
 * its results say so and are written to bench/out/, never over the committed ones.
 */
import { DEFAULTS } from '../lib/settings';
import type { RoundTrips } from './store-round-trip';

export const QUICK = process.env.BENCH_QUICK === '1';

export type ContenderId = 'direct' | 'pipe' | 'stored' | 'manyTokens' | 'passThrough' | 'portkey' | 'cacheHit';

export const LABELS: Record<ContenderId, string> = {
  direct: 'direct call',
  pipe: 'bare Node pipe',
  stored: 'this proxy, stored key',
  manyTokens: 'this proxy, stored key, 32 tokens',
  passThrough: 'this proxy, pass-through',
  portkey: 'Portkey gateway',
  cacheHit: 'this proxy, cache hit',
};

export type PhaseId = 'c1' | 'c1quota' | 'c1quotaRested' | 'c1quotaSlice20' | 'c16' | 'c64' | 'stream' | 'cache';

export interface Phase {
  id: PhaseId;
  title: string;
  contenders: ContenderId[];
  concurrency: number;
  /** Requests per contender per round, or (when `durationS` is set) none: a fixed duration instead. */
  count: number;
  durationS?: number;
  /** Each client waits this long after every answer before its next request. */
  pauseMs?: number;
  stream?: boolean;
  /**
   * The proxy's process is held to Lambda's CPU share at the default memory for its slots
   * (cpu-quota.ts), the share given per period of this length.
   */
  lambdaShare?: { periodMs: number };
}

const MAIN: ContenderId[] = ['direct', 'pipe', 'stored', 'passThrough', 'portkey'];
/** Under load, the one-token case beside traffic from many tokens, as real traffic arrives. */
const BUSY: ContenderId[] = ['direct', 'pipe', 'stored', 'manyTokens', 'passThrough', 'portkey'];
const scale = (full: number, quick: number) => (QUICK ? quick : full);

export const ROUNDS = scale(5, 2);
export const COLD_IMPORTS_PER_ROUND = scale(3, 1);
/** Store round trips measured per round (one at a time). */
export const STORE_ROUND_TRIPS = scale(200, 50);

export const PHASES: Phase[] = [
  {
    id: 'c1',
    title: 'c=1 paced (one request at a time, 20 ms between answer and next request)',
    contenders: MAIN,
    concurrency: 1,
    count: scale(120, 20),
    pauseMs: 20,
  },
  {
    id: 'c1quota',
    title: `c=1 paced, the proxy held to Lambda's CPU share at ${DEFAULTS.memoryMb} MB (a cgroup CPU quota): answers 20 ms apart ask more CPU a second than the share gives`,
    contenders: ['direct', 'stored'],
    concurrency: 1,
    count: scale(120, 20),
    pauseMs: 20,
    lambdaShare: { periodMs: 100 },
  },
  {
    id: 'c1quotaRested',
    title: `c=1, the same share, each request after a full period of rest (as an instance sees requests when answers take seconds)`,
    contenders: ['direct', 'stored'],
    concurrency: 1,
    count: scale(80, 20),
    pauseMs: 100,
    lambdaShare: { periodMs: 100 },
  },
  {
    id: 'c1quotaSlice20',
    title: `c=1, the same share given per 20 ms period (the slice reported for Lambda by public measurements), each request after rest`,
    contenders: ['direct', 'stored'],
    concurrency: 1,
    count: scale(80, 20),
    pauseMs: 100,
    lambdaShare: { periodMs: 20 },
  },
  {
    id: 'c16',
    title: 'c=16 (16 clients, back to back)',
    contenders: BUSY,
    concurrency: 16,
    count: scale(400, 100),
  },
  {
    id: 'c64',
    title: 'c=64 throughput (64 clients, back to back, fixed duration)',
    contenders: BUSY,
    concurrency: 64,
    count: 0,
    durationS: scale(4, 1),
  },
  {
    id: 'stream',
    title: 'streams, c=1 paced (SSE, 40 content events 5 ms apart)',
    contenders: MAIN,
    concurrency: 1,
    count: scale(20, 5),
    pauseMs: 20,
    stream: true,
  },
  {
    id: 'cache',
    title: 'cache hit, c=1 paced (the same prompt, answered from the cache)',
    contenders: ['stored', 'cacheHit'],
    concurrency: 1,
    count: scale(80, 20),
    pauseMs: 20,
  },
];

/** The provider's answer: status line and (JSON) whole body 20 ms after the request arrived. */
export const UPSTREAM = { firstByteMs: 20, events: 40, eventGapMs: 5 };

/** One contender's slot in one phase of one round. */
export interface Slot {
  answered: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  /**
   * Answered requests per second of the slot; with a fixed duration, the answers that ended inside
   * it divided by it (`answeredInWindow`), so requests finishing after it are not counted.
   */
  rps: number;
  answeredInWindow?: number;
  /** Request start to last body byte, over answered requests. */
  p50: number;
  p90: number;
  p99: number;
  /** Request start to first body byte. */
  firstByteP50: number;
  firstByteP99: number;
  /** Streams only: per event, upstream write to client receipt; and the time between two events' arrivals. */
  lagP50?: number;
  lagP99?: number;
  gapP50?: number;
  gapP99?: number;
  gapMax?: number;
  /** The contender's process CPU over the slot, per request sent (none for the direct call). */
  cpuMsPerRequest?: number;
  /** DynamoDB Local's CPU over the slot, per request sent, whatever the contender. */
  dynamoCpuMsPerRequest: number;
}

export interface Round {
  index: number;
  startedAt: string;
  /** 1, 5 and 15-minute load averages of the machine at the round's start and end. */
  loadStart: number[];
  loadEnd: number[];
  /** The order contenders took their turns in, this round (rotated by one per round). */
  order: ContenderId[];
  phases: Partial<Record<PhaseId, Partial<Record<ContenderId, Slot>>>>;
  /** Highest resident set since each process started (VmHWM), read at the round's end, MB. */
  peakRssMb: Record<string, number>;
  /** Fresh Node processes importing the Lambda bundle: import time of each, ms. */
  coldImportMs: number[];
  /** The store's own round trip (store-round-trip.ts), measured once per round between the phases. */
  storeRoundTripMs?: RoundTrips;
}

/** One CPU quota a Lambda-share phase ran under. */
export interface LambdaShare {
  memoryMb: number;
  quotaUs: number;
  periodUs: number;
}

export interface Results {
  quick: boolean;
  commit: string;
  /** The working tree had no change against `commit` when the run started. */
  clean: boolean;
  startedAt: string;
  durationS: number;
  node: string;
  machine: { cpu: string; cores: number; memoryGb: number; os: string };
  upstream: typeof UPSTREAM;
  phases: Phase[];
  lambdaBundleBytes: number;
  /** The Lambda-share quota the c1quota phase ran under, or why it could not run. */
  lambdaShare?: LambdaShare[] | LambdaShare | { unavailable: string };
  /** 1, 5 and 15-minute load averages (os.loadavg) at the run's start and end; `machine.cores` is what they compare with. */
  loadStart?: number[];
  loadEnd?: number[];
  rounds: Round[];
}
