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

/**
 * How a client of the disconnect phase behaves: it leaves before the response headers, after a
 * few events of a stream, or halfway through sending its body; or it stays and reads the whole
 * answer (the control: those must all succeed while the others drop).
 */
export type DisconnectKind = 'beforeHeaders' | 'midStream' | 'midUpload' | 'complete';

export interface DisconnectJob {
  kind: 'disconnect';
  json: RequestSpec;
  stream: RequestSpec;
  count: number;
  concurrency: number;
  /** Seeds the choice of kind and of the point of leaving, so a run can be replayed. */
  seed: number;
  /** Clients leaving before the headers do so at a random time up to this. */
  maxDropDelayMs: number;
}

export interface DisconnectKindResult {
  sent: number;
  /** The client left as planned. */
  dropped: number;
  /** A whole 200 answer arrived: what a staying client expects; a leaving one was too slow to leave. */
  answered: number;
  /** Non-200 answers, and failures other than a refused connection. */
  errors: number;
  /** Connections refused or reset before the client meant to leave: the server was not there. */
  refused: number;
  firstError?: string;
}

export interface DisconnectResult {
  byKind: Record<DisconnectKind, DisconnectKindResult>;
}

export type LoadJob = LatencyJob | ThroughputJob | DisconnectJob;

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

export type LoadResult = LatencyResult | ThroughputResult | DisconnectResult;
