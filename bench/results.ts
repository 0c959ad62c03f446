/** The shape of bench/results.json: everything one run measured. */
import type { ColdStart } from './cold-start';
import type { ConsumerBatchFigures } from './consumer-batch';
import type { ContenderId } from './contenders';
import type { CostModel } from './cost-model';
import type { RampFigure } from './ramp';
import type { ProfileSummary } from './profile';
import type { RoundTripSummary } from './round-trips';
import type { Percentiles } from './stats';
import type { DisconnectFigures } from './disconnects';
import type { Headline } from './headline';
import type { PinnedFigures } from './pinned';
import type { StoreCallCpu } from './store-call';

export interface LatencyFigures extends Percentiles {
  errors: number;
  mismatches: number;
  /** The p50 of each interleaved round on its own: their spread is this run's noise on the p50. */
  roundP50s: number[];
}

/** The store alone through the proxy's client: a GetItem and the pre-upstream wave. */
export interface StoreYardstickFigures {
  getItem: Percentiles;
  wave: Percentiles;
  /** The wave sent while a usage row's write is in flight (warm figures only; absent in runs before it was measured). */
  waveBesideRowWrite?: Percentiles;
  /** The wave's p50 in each round (warm figures only). */
  waveRoundP50s?: number[];
}

export interface StreamFigures {
  firstByte: LatencyFigures;
  /** Upstream write to client receipt, per event. */
  eventLag?: Percentiles;
  total: Percentiles;
}

export interface Resources {
  cpuMsPerRequest: number;
  /** CPU per request in each round on its own (the spread is the noise; one /proc tick is 10 ms). */
  roundCpuMsPerRequest: number[];
  requestsMeasured: number;
  rssIdleMb: number;
  /** Highest RSS during the phase's rounds. */
  rssMaxMb: number;
  /** Highest RSS during the throughput ramp (up to the ramp's top concurrency). */
  rssRampMaxMb?: number;
  /**
   * DynamoDB Local's CPU per request in the same rounds (this proxy only), less what it spends
   * idle (its CPU rate while the contenders that never call it run, times the rounds' duration).
   */
  storeCpuMsPerRequest?: number;
  /** The same without subtracting the idle rate. */
  storeGrossCpuMsPerRequest?: number;
  /** DynamoDB Local's CPU per second of wall time while no request reached it (dynamoDbLocal only). */
  storeIdleCpuMsPerSecond?: number;
}

export interface Budget {
  name: string;
  target: string;
  measured: string;
  met: boolean;
  why: string;
}

export interface Results {
  date: string;
  machine: { nproc: string; memory: string; cpu: string; node: string; os: string };
  /** The code measured: the commit, and the files that differed from it when the run started. */
  source: { commit: string; clean: boolean; changed: string[] };
  /** BENCH_QUICK=1: iteration counts cut for a smoke test; not figures to quote. */
  quick: boolean;
  /** 1-minute load average when the run started and ended: other work on the machine shows up here. */
  loadAverage: { start: number; end: number };
  settings: {
    upstream: { json: string; stream: string };
    iterations: Record<string, string>;
    contenders: Record<string, string>;
    notes: string[];
  };
  /**
   * The yardstick of the latency budgets: the store alone, cold (first calls on a fresh DynamoDB
   * Local) and warm, interleaved with the contenders in the rounds of each c=1 phase.
   */
  yardstick: { cold: StoreYardstickFigures; c1: StoreYardstickFigures; c1Paced: StoreYardstickFigures };
  /** Client-side CPU of one GetItem: the proxy's client, the SDK's clients, bare HTTP. */
  storeCallCpuMs: StoreCallCpu;
  latency: {
    c1: Partial<Record<ContenderId, LatencyFigures>>;
    /** c=1 with a pause after each answer: every request alone, as a Lambda instance serves them. */
    c1Paced: Partial<Record<ContenderId, LatencyFigures>>;
    c16: Partial<Record<ContenderId, LatencyFigures>>;
  };
  streaming: { c1: Partial<Record<ContenderId, StreamFigures>>; c16: Partial<Record<ContenderId, StreamFigures>> };
  /** In rounds (ramp.ts); runs from before rounds have no `roundMaxRps` and no step rounds. */
  throughput: Partial<Record<ContenderId, RampFigure>>;
  /** CPU and memory per process: at c=1 paced (how a Lambda instance serves) and at c=16. */
  resources: { c1Paced: ResourceTable; c16: ResourceTable };
  /**
   * c=16 latency and throughput with the contender alone on one CPU and the rest of the rig (the
   * store, the load generator, the fake upstream) on the other; absent from runs before the phase.
   */
  pinned?: PinnedFigures;
  /** Clients that leave mid-request: what each contender answered and whether it survived. */
  disconnects: DisconnectFigures[];
  roundTrips: RoundTripSummary[];
  /** One stream-consumer batch at the cost model's traffic; absent in runs before it was measured. */
  consumerBatch?: ConsumerBatchFigures;
  coldStart: ColdStart;
  cost: CostModel;
  budgets: Budget[];
  /** The figures the README quotes, derived from the ones above (bench/headline.ts). */
  headline: Headline;
  profile?: ProfileSummary & { load: string };
  durationSeconds: number;
}

/** Per contender; `dynamoDbLocal` is the store's own java process, per stored-key request of the proxy. */
export type ResourceTable = Partial<Record<ContenderId | 'dynamoDbLocal', Resources>>;
