/**
 * Infrastructure cost per million proxied requests on AWS, from the counts this
 * run measured. Prices are list prices as assumed below (eu-west-1, where the
 * stack deploys by default); check them against the current AWS price list.
 */
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
  notes: [
    'Lambda arm64: $0.0000133334 per GB-second (first 7.5 billion GB-s a month) and $0.20 per million requests; function URLs cost nothing extra; streamed responses are free up to 6 MB each.',
    'DynamoDB on-demand, Standard table class: $0.7068 per million write request units and $0.1415 per million read request units (eu-west-1 after the November 2024 on-demand price cut; us-east-1: $0.625 / $0.125). A write unit covers 1 KB, a strongly consistent read 4 KB (an eventually consistent read is half a unit).',
    'KMS: $0.03 per 10,000 requests, $1 per key-month. Secrets Manager: $0.40 per secret-month, $0.05 per 10,000 API calls.',
    'Data transfer out to the internet: $0.09 per GB (first 10 TB a month); it applies to any service answering clients from AWS, so it is listed but not counted in the total.',
    'No free tier is applied. CloudWatch Logs: the function writes no log line per successful request and platform logs are at WARN, so ingestion is ~0 per request.',
  ],
} as const;

export interface CostInputs {
  upstreamSeconds: number;
  /** What the proxy adds to the invocation before and while it answers (measured added p50, stored mode). */
  proxyOverheadMs: number;
  /** Store writes after the answer: the invocation ends only when they are done. */
  tailAfterResponseMs: number;
  writeUnitsPerRequest: number;
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
}

export interface CostLine {
  item: string;
  usdPerMillion: number;
  basis: string;
}

export interface CostModel {
  memoryMb: number;
  billedMsPerRequest: number;
  lines: CostLine[];
  totalUsdPerMillion: number;
  /** The same total at other memory sizes, to show what the memory setting does to it. */
  byMemory: Array<{ memoryMb: number; totalUsdPerMillion: number }>;
  fixedMonthly: CostLine[];
  dataTransfer: CostLine;
}

/** Lambda's CPU share: one vCPU at 1,769 MB, proportionally less below. */
export const FULL_VCPU_MB = 1769;

/**
 * The stream consumer folding rows into rollups, at its worst case: each row alone in a batch
 * (one invocation of about 50 ms at 128 MB, assumed, and one write per hourly and daily rollup
 * item). Under steady traffic a batch holds up to 1,000 rows and its cost per request nearly vanishes.
 */
export const STREAM_CONSUMER = { memoryMb: 128, msPerBatch: 50, rollupWritesPerRow: 2 };

export function streamConsumerUsdPerMillion(): number {
  return (
    PRICES.lambdaPerMillionRequests +
    (STREAM_CONSUMER.memoryMb / 1024) * (STREAM_CONSUMER.msPerBatch / 1000) * 1_000_000 * PRICES.lambdaArmPerGbSecond +
    STREAM_CONSUMER.rollupWritesPerRow * PRICES.dynamoPerMillionWriteUnits
  );
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
        `${billedFor(mb).toFixed(1)} ms billed per request = ${inputs.upstreamSeconds} s upstream + ${inputs.proxyOverheadMs.toFixed(1)} ms proxy + ${inputs.tailAfterResponseMs.toFixed(1)} ms row writes after the answer` +
        (inputs.cpuMsPerRequest ? ` + ${throttledMs(mb).toFixed(1)} ms for its ${inputs.cpuMsPerRequest.toFixed(2)} ms of CPU at ${mb} MB's share of a vCPU (${(mb / FULL_VCPU_MB).toFixed(3)})` : ''),
    },
  ];
  const lines: CostLine[] = [
    ...fixedLines(memoryMb),
    {
      item: 'Lambda cold-start init',
      usdPerMillion: initGbSeconds * PRICES.lambdaArmPerGbSecond,
      basis: `${inputs.coldStartsPerMillion} cold starts per million (assumed) × ${inputs.coldStartInitMs.toFixed(0)} ms init (measured import time)`,
    },
    {
      item: 'DynamoDB writes',
      usdPerMillion: inputs.writeUnitsPerRequest * PRICES.dynamoPerMillionWriteUnits,
      basis: `${inputs.writeUnitsPerRequest} write units per request (counted)`,
    },
    {
      item: 'DynamoDB reads',
      usdPerMillion: inputs.readUnitsPerRequest * PRICES.dynamoPerMillionReadUnits,
      basis: `${inputs.readUnitsPerRequest} read units per request (counted)`,
    },
    {
      item: 'KMS Decrypt',
      usdPerMillion: 0,
      basis: 'unwrapped data keys are cached in memory for 5 min per instance, so calls scale with instances × stored keys × time, not with requests: ~0 per request at steady state (e.g. 3 warm instances × 5 keys ≈ 131k calls ≈ $0.39 a month)',
    },
    {
      item: 'Stream consumer (rollups), at most',
      usdPerMillion: streamConsumerUsdPerMillion(),
      basis: `each row alone in a batch: one invocation (~${STREAM_CONSUMER.msPerBatch} ms at ${STREAM_CONSUMER.memoryMb} MB, assumed) and ${STREAM_CONSUMER.rollupWritesPerRow} rollup writes; under steady traffic batches of up to 1,000 rows make it nearly 0`,
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
    memoryMb,
    billedMsPerRequest: billedMs,
    lines,
    totalUsdPerMillion: total(lines),
    byMemory: [128, 256, 512].map((mb) => ({ memoryMb: mb, totalUsdPerMillion: total(fixedLines(mb)) + variable })),
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
