/** What the orchestrator asks the load generator process to do, and what it answers. */

export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** A response header every answer must carry (e.g. `x-proxy-cache: HIT`); others count as mismatches. */
  expectHeader?: [name: string, value: string];
  /** Read the upstream's write stamps in SSE events (not for replays of stored answers, whose stamps are old). */
  readStamps?: boolean;
}

export interface LatencyJob {
  kind: 'latency';
  spec: RequestSpec;
  concurrency: number;
  warmup: number;
  count: number;
  /** Each worker waits this long after every answer (so a request never overlaps the previous one's after-work). */
  pauseMs?: number;
}

export interface ThroughputJob {
  kind: 'throughput';
  spec: RequestSpec;
  steps: Array<{ concurrency: number; durationMs: number }>;
}

export type LoadJob = LatencyJob | ThroughputJob;

export interface LatencyResult {
  /** Request start to the last body byte, per successful request. */
  totalMs: number[];
  /** Request start to the first body byte. */
  firstByteMs: number[];
  /** Upstream write to client receipt, per SSE event (streams with `readStamps`). */
  eventLagMs: number[];
  errors: number;
  mismatches: number;
  statuses: Record<string, number>;
  firstError?: string;
  elapsedMs: number;
}

export interface ThroughputStep {
  concurrency: number;
  durationMs: number;
  completed: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  firstError?: string;
}

export interface ThroughputResult {
  steps: ThroughputStep[];
}

export type LoadResult = LatencyResult | ThroughputResult;
