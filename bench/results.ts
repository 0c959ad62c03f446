/** The shape of bench/results.json: everything one run measured. */
import type { ColdStart } from './cold-start';
import type { ContenderId } from './contenders';
import type { CostModel } from './cost-model';
import type { ThroughputStep } from './load-protocol';
import type { ProfileSummary } from './profile';
import type { RoundTripSummary } from './round-trips';
import type { Percentiles } from './stats';
import type { StoreCallCost } from './store-call';

export interface LatencyFigures extends Percentiles {
  errors: number;
  mismatches: number;
}

export interface StreamFigures {
  firstByte: LatencyFigures;
  /** Upstream write to client receipt, per event. */
  eventLag?: Percentiles;
  total: Percentiles;
}

export interface Resources {
  cpuMsPerRequest: number;
  requestsMeasured: number;
  rssIdleMb: number;
  /** Highest RSS during the c=16 rounds. */
  rssMaxMb: number;
  /** Highest RSS during the throughput ramp (up to the ramp's top concurrency). */
  rssRampMaxMb?: number;
  /** DynamoDB Local's CPU per request in the same batch (this proxy only). */
  storeCpuMsPerRequest?: number;
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
  /** The code measured: the commit, and whether lambda/ had uncommitted changes at the start of the run. */
  source: { commit: string; lambdaChanged: boolean };
  /** 1-minute load average when the run started and ended: other work on the machine shows up here. */
  loadAverage: { start: number; end: number };
  settings: {
    upstream: { json: string; stream: string };
    iterations: Record<string, string>;
    contenders: Record<string, string>;
    notes: string[];
  };
  /** Sequential GetItem latency through the proxy's own store client. */
  dynamoRoundTrip: Percentiles;
  /** Token+key BatchGetItem alongside the rate-limit UpdateItem, in parallel: the store's share of a request's latency. */
  preUpstreamWave: Percentiles;
  /** Client-side CPU of one GetItem: the proxy's client, the low-level client with cached middleware, bare HTTP. */
  storeCallCpuMs: StoreCallCost['cpuMsPerCall'];
  latency: {
    c1: Partial<Record<ContenderId, LatencyFigures>>;
    /** c=1 with a pause after each answer: every request alone, as a Lambda instance serves them. */
    c1Paced: Partial<Record<ContenderId, LatencyFigures>>;
    c16: Partial<Record<ContenderId, LatencyFigures>>;
  };
  streaming: { c1: Partial<Record<ContenderId, StreamFigures>>; c8: Partial<Record<ContenderId, StreamFigures>> };
  throughput: Partial<Record<ContenderId, { steps: ThroughputStep[]; maxRps: number; atConcurrency: number }>>;
  resources: Partial<Record<ContenderId | 'dynamoDbLocal', Resources>>;
  roundTrips: RoundTripSummary[];
  coldStart: ColdStart;
  cost: CostModel;
  budgets: Budget[];
  profile?: ProfileSummary & { load: string };
  durationSeconds: number;
}
