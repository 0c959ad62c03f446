/**
 * Infrastructure cost per million proxied requests on AWS, from the counts this
 * run measured. Prices are list prices as assumed below (eu-west-1, where the
 * stack deploys by default); check them against the current AWS price list.
 */
import { CONSUMER_MEMORY_MB, STREAM_MAPPING } from '../lib/constructs/stats-consumer';
import { DEFAULTS } from '../lib/settings';

export const PRICES = {
  region: 'eu-west-1 (Ireland)',
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  dynamoPerMillionWriteUnits: 0.7068,
  dynamoPerMillionReadUnits: 0.1415,
  kmsPer10kRequests: 0.03,
  kmsKeyPerMonth: 1.0,
  secretPerMonth: 0.4,
  secretsPer10kCalls: 0.05,
  dataOutPerGb: 0.09,
  fargateArmPerVcpuHour: 0.03238,
  fargateArmPerGbHour: 0.00356,
  albPerHour: 0.0225,
  notes: [
    'Lambda arm64: $0.0000133334 per GB-second (first 7.5 billion GB-s a month) and $0.20 per million requests; function URLs cost nothing extra; streamed responses are free up to 6 MB each.',
    'DynamoDB on-demand, Standard table class: $0.7068 per million write request units and $0.1415 per million read request units (eu-west-1 after the November 2024 on-demand price cut; us-east-1: $0.625 / $0.125). A write unit covers 1 KB, a strongly consistent read 4 KB (an eventually consistent read is half a unit).',
    'KMS: $0.03 per 10,000 requests, $1 per key-month. Secrets Manager: $0.40 per secret-month, $0.05 per 10,000 API calls.',
    'Data transfer out to the internet: $0.09 per GB (first 10 TB a month); it applies to any service answering clients from AWS, so it is listed but not counted in the total.',
    'For the container design FINDINGS.md compares (not deployed): Fargate Linux/ARM $0.03238 per vCPU-hour and $0.00356 per GB-hour, an Application Load Balancer $0.0225 per hour plus LCUs (us-east-1 list prices; other regions are higher).',
    'No free tier is applied. CloudWatch Logs: the function writes no log line per successful request and platform logs are at WARN, so ingestion is ~0 per request.',
  ],
} as const;

export interface CostInputs {
  upstreamSeconds: number;
  /** What the proxy adds to the invocation before and while it answers (measured added p50, stored mode). */
  proxyOverheadMs: number;
  /**
   * Store writes after the answer: the invocation ends only when they are done. Measured in the
   * store-counting phase (the client's last byte to the last write's reply, less the counter's hold-back).
   */
  tailAfterResponseMs: number;
  /** Write units per request as DynamoDB Local reported them (ReturnConsumedCapacity). */
  writeUnitsPerRequest: number;
  /**
   * Write units per request as DynamoDB bills them, from the written items' sizes (store-counter.ts):
   * DynamoDB Local reports a transaction's units per table, not per item. Absent in runs before it was counted.
   */
  billedWriteUnitsPerRequest?: number;
  /** Items one request's TransactWriteItems names (its row and the spend counters it adds to). */
  transactionItemsPerRequest?: number;
  readUnitsPerRequest: number;
  /** Bytes sent to the client per request (for the data-transfer line). */
  responseBytes: number;
  /**
   * Process CPU per request, one at a time, on this machine (a full core). In Lambda the same work
   * runs at the memory size's share of a vCPU (one vCPU at 1,769 MB), so it takes 1 / share as long.
   */
  cpuMsPerRequest?: number;
  /** Cold starts per million requests (each reads the admin secret once and is billed for its init). */
  coldStartsPerMillion: number;
  coldStartInitMs: number;
  /** One stream-consumer batch, measured (consumer-batch.ts); absent in runs before it was measured. */
  consumerBatch?: { rowsPerBatch: number; wallMs: number; cpuMs: number };
}

export interface CostLine {
  item: string;
  usdPerMillion: number;
  basis: string;
}

export interface CostModel {
  /** What the model was given: the run's measured figures it prices. */
  inputs?: CostInputs;
  memoryMb: number;
  billedMsPerRequest: number;
  lines: CostLine[];
  totalUsdPerMillion: number;
  /** The same total at other memory sizes, to show what the memory setting does to it. */
  byMemory: Array<{ memoryMb: number; totalUsdPerMillion: number }>;
  /** The stream consumer at the stated traffic (in the total) and at its worst case, a lone row per batch. */
  streamConsumer?: { monthlyRequests: number; rowsPerBatch: number; usdPerMillion: number; worstCaseUsdPerMillion: number };
  fixedMonthly: CostLine[];
  dataTransfer: CostLine;
}

/** Lambda's CPU share: one vCPU at 1,769 MB, proportionally less below. */
export const FULL_VCPU_MB = 1769;

/** The traffic the stream consumer's line is priced at: batches fill with what arrives in the batching window. */
export const MONTHLY_REQUESTS = 1_000_000;
const SECONDS_PER_MONTH = 30 * 86_400;

/**
 * The stream consumer folding rows into rollups (lib/constructs/stats-consumer.ts): one invocation
 * per batch, and one write per rollup item a batch touches: the hour and the day of each
 * (provider, model, requester, token, kind) its rows carry, each item under 1 KB (one write unit).
 * A batch's duration is measured when the run has it (its wall time on DynamoDB Local plus its CPU
 * stretched to the consumer's share of a vCPU), else assumed at `msPerBatch`. Its stream reads are
 * free: DynamoDB does not charge a Lambda trigger for GetRecords.
 */
export const STREAM_CONSUMER = { memoryMb: CONSUMER_MEMORY_MB, msPerBatch: 50, rollupWritesPerCombination: 2 };

/** Billed milliseconds of one consumer batch: measured if given, else the assumption. */
export function consumerBatchMs(measured?: { wallMs: number; cpuMs: number }): number {
  if (!measured) return STREAM_CONSUMER.msPerBatch;
  return measured.wallMs + measured.cpuMs * (1 / Math.min(1, STREAM_CONSUMER.memoryMb / FULL_VCPU_MB) - 1);
}

/**
 * Cost per million rows when each batch holds `rowsPerBatch` rows that share their rollup items
 * (one token and model, as the benchmark's traffic): one invocation and two writes per batch.
 * A lone row per batch is the worst case; rows of many combinations add two writes each, up to two per row.
 */
export function streamConsumerUsdPerMillion(rowsPerBatch = 1, msPerBatch: number = STREAM_CONSUMER.msPerBatch): number {
  const batchesPerMillion = 1_000_000 / Math.max(1, rowsPerBatch);
  const perBatch =
    PRICES.lambdaPerMillionRequests / 1_000_000 +
    (STREAM_CONSUMER.memoryMb / 1024) * (msPerBatch / 1000) * PRICES.lambdaArmPerGbSecond +
    (STREAM_CONSUMER.rollupWritesPerCombination * PRICES.dynamoPerMillionWriteUnits) / 1_000_000;
  return batchesPerMillion * perBatch;
}

/**
 * Rows per batch at a monthly traffic, on one stream shard: the mapping invokes when its batching
 * window closes or its batch is full, whichever comes first.
 */
export function rowsPerBatchAt(monthlyRequests: number): number {
  const perSecond = monthlyRequests / SECONDS_PER_MONTH;
  return Math.max(1, Math.min(STREAM_MAPPING.batchSize, perSecond * STREAM_MAPPING.maxBatchingWindow.toSeconds()));
}

export function costPerMillion(inputs: CostInputs, memoryMb: number = DEFAULTS.memoryMb): CostModel {
  const million = 1_000_000;
  const hostMs = inputs.upstreamSeconds * 1000 + inputs.proxyOverheadMs + inputs.tailAfterResponseMs;
  // Worst case: no CPU burst above the share, every CPU millisecond stretched by 1 / share.
  const throttledMs = (mb: number) => (inputs.cpuMsPerRequest ?? 0) * (1 / Math.min(1, mb / FULL_VCPU_MB) - 1);
  const billedFor = (mb: number) => hostMs + throttledMs(mb);
  const billedMs = billedFor(memoryMb);
  const lambdaFor = (mb: number) => (mb / 1024) * (billedFor(mb) / 1000) * million * PRICES.lambdaArmPerGbSecond;
  const initGbSeconds = (memoryMb / 1024) * (inputs.coldStartInitMs / 1000) * inputs.coldStartsPerMillion;
  const fixedLines = (mb: number): CostLine[] => [
    { item: 'Lambda requests', usdPerMillion: PRICES.lambdaPerMillionRequests, basis: '$0.20 per million invocations' },
    {
      item: `Lambda duration (arm64, ${mb} MB)`,
      usdPerMillion: lambdaFor(mb),
      basis:
        `${billedFor(mb).toFixed(1)} ms billed per request = ${inputs.upstreamSeconds} s upstream + ${inputs.proxyOverheadMs.toFixed(1)} ms proxy (measured added p50, one request at a time) + ` +
        `${inputs.tailAfterResponseMs.toFixed(1)} ms of store writes after the answer (measured: the client's last byte to the last write's reply, store-counting phase, DynamoDB Local)` +
        (inputs.cpuMsPerRequest ? ` + ${throttledMs(mb).toFixed(1)} ms for its ${inputs.cpuMsPerRequest.toFixed(2)} ms of CPU at ${mb} MB's share of a vCPU (${(mb / FULL_VCPU_MB).toFixed(3)})` : ''),
    },
  ];
  const billedWrites = inputs.billedWriteUnitsPerRequest;
  const writeUnits = billedWrites ?? inputs.writeUnitsPerRequest;
  const rowsPerBatch = rowsPerBatchAt(MONTHLY_REQUESTS);
  const batch = inputs.consumerBatch;
  const batchMs = consumerBatchMs(batch);
  const consumer = streamConsumerUsdPerMillion(rowsPerBatch, batchMs);
  const consumerWorst = streamConsumerUsdPerMillion(1, batchMs);
  const lines: CostLine[] = [
    ...fixedLines(memoryMb),
    {
      item: 'Lambda cold-start init',
      usdPerMillion: initGbSeconds * PRICES.lambdaArmPerGbSecond,
      basis: `${inputs.coldStartsPerMillion} cold starts per million (assumed) × ${inputs.coldStartInitMs.toFixed(0)} ms init (measured import time)`,
    },
    {
      item: 'DynamoDB writes',
      usdPerMillion: writeUnits * PRICES.dynamoPerMillionWriteUnits,
      basis:
        billedWrites !== undefined
          ? `${fmtUnits(billedWrites)} write units per request, billed from the written items' sizes: a transaction bills 2 units per item per KB${inputs.transactionItemsPerRequest !== undefined ? ` and names ${fmtUnits(inputs.transactionItemsPerRequest)} items per request (the row and its spend counters)` : ''} (DynamoDB Local reported ${fmtUnits(inputs.writeUnitsPerRequest)})`
          : `${fmtUnits(inputs.writeUnitsPerRequest)} write units per request as DynamoDB Local reported them; it reports a transaction's units per table, not per item (2 per item per KB as DynamoDB bills), so a transaction naming the row and two spend counters bills more than this: billed units were not counted in this run`,
    },
    {
      item: 'DynamoDB reads',
      usdPerMillion: inputs.readUnitsPerRequest * PRICES.dynamoPerMillionReadUnits,
      basis: `${fmtUnits(inputs.readUnitsPerRequest)} read units per request (counted)`,
    },
    {
      item: 'KMS Decrypt',
      usdPerMillion: 0,
      basis: 'unwrapped data keys are cached in memory for 5 min per instance, so calls scale with instances × stored keys × time, not with requests: ~0 per request at steady state (e.g. 3 warm instances × 5 keys ≈ 131k calls ≈ $0.39 a month)',
    },
    {
      item: `Stream consumer (rollups), at ${(MONTHLY_REQUESTS / 1e6).toLocaleString('en')}M requests a month`,
      usdPerMillion: consumer,
      basis:
        `${(MONTHLY_REQUESTS / SECONDS_PER_MONTH).toFixed(2)} requests/s fill a batch with ${rowsPerBatch.toFixed(1)} rows in the mapping's ${STREAM_MAPPING.maxBatchingWindow.toSeconds()} s batching window (one shard): ` +
        (batch
          ? `one invocation of ${batchMs.toFixed(1)} ms at ${STREAM_CONSUMER.memoryMb} MB (measured: a batch of ${batch.rowsPerBatch} rows took ${batch.wallMs.toFixed(1)} ms on DynamoDB Local and ${batch.cpuMs.toFixed(2)} ms of CPU, stretched to ${STREAM_CONSUMER.memoryMb} MB's share of a vCPU) and`
          : `one invocation (~${STREAM_CONSUMER.msPerBatch} ms at ${STREAM_CONSUMER.memoryMb} MB, assumed: not measured in this run) and`) +
        ` ${STREAM_CONSUMER.rollupWritesPerCombination} rollup writes (hour and day) per batch when its rows share a token and model; ` +
        `worst case, each row alone in a batch: $${consumerWorst.toFixed(2)}`,
    },
    {
      item: 'Secrets Manager GetSecretValue',
      usdPerMillion: (inputs.coldStartsPerMillion / 10_000) * PRICES.secretsPer10kCalls,
      basis: 'the admin key is read once per cold start',
    },
  ];
  const total = (all: CostLine[]) => all.reduce((sum, line) => sum + line.usdPerMillion, 0);
  const variable = total(lines.slice(2));
  return {
    inputs,
    memoryMb,
    billedMsPerRequest: billedMs,
    lines,
    totalUsdPerMillion: total(lines),
    byMemory: [128, 256, 512].map((mb) => ({ memoryMb: mb, totalUsdPerMillion: total(fixedLines(mb)) + variable })),
    streamConsumer: { monthlyRequests: MONTHLY_REQUESTS, rowsPerBatch, usdPerMillion: consumer, worstCaseUsdPerMillion: consumerWorst },
    fixedMonthly: [
      { item: 'KMS key', usdPerMillion: PRICES.kmsKeyPerMonth, basis: 'per month, whatever the traffic' },
      { item: 'Secrets Manager secret (admin key)', usdPerMillion: PRICES.secretPerMonth, basis: 'per month, whatever the traffic' },
    ],
    dataTransfer: {
      item: 'Data transfer out (not in the total)',
      usdPerMillion: ((inputs.responseBytes * 1_000_000) / 1e9) * PRICES.dataOutPerGb,
      basis: `${inputs.responseBytes} bytes per answer in this run; real answers are larger`,
    },
  };
}

const fmtUnits = (units: number) => (Number.isInteger(units) ? String(units) : units.toFixed(2));

/** The provider's answer time the cost is quoted at (the issue's target). */
export const UPSTREAM_SECONDS = 3;
/** Cold starts per million requests the model assumes (each reads the admin secret once and is billed for its init). */
export const COLD_STARTS_PER_MILLION = 1000;

/** Hours in a month, as AWS prices monthly figures. */
const HOURS_PER_MONTH = 730;

/**
 * A design whose compute is not billed per waiting request: long-running containers behind a load
 * balancer, each serving many requests at once, so a request's 3 s wait costs nothing by itself.
 * Two of the smallest Fargate tasks (0.25 vCPU, 0.5 GB; two for two availability zones) and one ALB.
 */
export const CONTAINER_DESIGN = { tasks: 2, vcpuPerTask: 0.25, gbPerTask: 0.5 };

export interface ContainerCost {
  fixedUsdPerMonth: number;
  /** vCPU time for the measured CPU per request (concurrent requests, a full core), per million. */
  cpuUsdPerMillion: number;
  /** Requests per second the tasks serve with their CPU fully busy. */
  capacityPerSecond: number;
  /** The request path's store, key and consumer lines of the Lambda model, which a container keeps. */
  storeUsdPerMillion: number;
  /** Monthly requests from which the total is within the target; Infinity when never. */
  monthlyRequestsForTarget: number;
  totalAtMonthlyRequests: number;
}

export function containerCost(cost: CostModel, cpuMsPerRequest: number, targetUsdPerMillion: number): ContainerCost {
  const d = CONTAINER_DESIGN;
  const taskHour = d.vcpuPerTask * PRICES.fargateArmPerVcpuHour + d.gbPerTask * PRICES.fargateArmPerGbHour;
  const fixedUsdPerMonth = (d.tasks * taskHour + PRICES.albPerHour) * HOURS_PER_MONTH;
  const cpuUsdPerMillion = ((cpuMsPerRequest * 1_000_000) / 3_600_000) * PRICES.fargateArmPerVcpuHour;
  const storeUsdPerMillion = cost.lines.filter((line) => !/^Lambda /.test(line.item)).reduce((sum, line) => sum + line.usdPerMillion, 0);
  const variable = storeUsdPerMillion + cpuUsdPerMillion;
  const headroom = targetUsdPerMillion - variable;
  return {
    fixedUsdPerMonth,
    cpuUsdPerMillion,
    capacityPerSecond: (d.tasks * d.vcpuPerTask * 1000) / cpuMsPerRequest,
    storeUsdPerMillion,
    monthlyRequestsForTarget: headroom > 0 ? (fixedUsdPerMonth / headroom) * 1_000_000 : Infinity,
    totalAtMonthlyRequests: (fixedUsdPerMonth * 1_000_000) / MONTHLY_REQUESTS + variable,
  };
}
