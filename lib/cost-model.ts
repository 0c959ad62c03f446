/**
 * What the stack costs per million proxied requests: one function of stated inputs, the list
 * prices and the assumptions below. docs/deploy.md's cost section is rendered from it
 * (`npm run docs:deploy`), so the page and the model can't disagree. The assumptions are
 * round figures to reason with, not a measurement: check your own in CloudWatch (billed duration,
 * consumed write units) and pass them in.
 */
import { CONSUMER_MEMORY_MB, STREAM_MAPPING } from './constructs/stats-consumer';
import { DEFAULTS } from './settings';
import { AHEAD_BUCKETS, RING_SLOTS, shardCount } from '../lambda/auth/sliding-minute';

/** eu-west-1 list prices (2026), no free tier. */
export const PRICES = {
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  dynamoPerMillionWriteUnits: 0.7068,
  dynamoPerMillionReadUnits: 0.1415,
  dynamoStoragePerGbMonth: 0.283,
  dynamoPitrPerGbMonth: 0.2264,
  kmsKeyPerMonth: 1,
  kmsPer10kRequests: 0.03,
  secretPerMonth: 0.4,
  secretsPer10kCalls: 0.05,
  logsIngestionPerGb: 0.57,
  alarmMetricPerMonth: 0.1,
  dataOutPerGb: 0.09,
  s3PutPer1000: 0.005,
  s3StoragePerGbMonth: 0.023,
  athenaPerTbScanned: 5,
} as const;

/**
 * An exported usage row in its gzipped JSON Lines object (docs/alerts.md, "Usage in Athena"):
 * `exportObjects` gave 124 bytes a row for objects of 4 rows (the assumed batch), 346 for a row
 * alone and 31 for 400; rounded up, as real rows repeat themselves less than those measured.
 */
export const EXPORT_BYTES_PER_ROW = 150;

/** Athena bills at least this much data scanned per query. */
export const ATHENA_MIN_BYTES_PER_QUERY = 10 * 1024 ** 2;

/** What one Athena query costs that reads this many exported rows (every named query reads all it is given). */
export const athenaQueryUsd = (rows: number) =>
  (Math.max(ATHENA_MIN_BYTES_PER_QUERY, rows * EXPORT_BYTES_PER_ROW) / 1e12) * PRICES.athenaPerTbScanned;

/** A usage row as stored, about 1 KB: a million rows are about 1 GB. */
export const ROW_GB_PER_MILLION = 1;

/**
 * What a requester label (or a tag) adds: one more spend write per consumer batch, on the
 * subject's own item (lambda/budgets/dynamodb/spend-fold.ts), whatever the number of rows in it.
 */
export const SUBJECT_WRITES_PER_BATCH = 1;

/** DynamoDB's limit per partition key value, whatever the table's capacity. */
export const PARTITION_WRITE_UNITS_PER_SECOND = 1_000;

/** The write units of one write to an item of this size: one per started KB (the larger of the item before and after). */
export const writeUnitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/**
 * The token gate's item (docs/deploy.md, "Partition ceilings"), which every proxied request
 * writes: a fixed part (the key, a copy of what authentication needs, last use, the budget flag
 * and the per-token limit, for a token without tags or a model list, which add their own bytes),
 * and the rate counters (lambda/auth/sliding-minute.ts): the count, its offset by the limit, the
 * limit it is offset by, the newest bucket, and the ring's slots but the empty ones ahead, at their
 * largest (counts of a billion). Their size does not follow the traffic. Measured on DynamoDB Local
 * by test/integration/store/gate-item-size.test.ts.
 */
export const GATE_ITEM = {
  baseBytes: 320,
  counterBytes: 13 + (RING_SLOTS - AHEAD_BUCKETS) * 9,
};

export const gateItemBytes = () => GATE_ITEM.baseBytes + GATE_ITEM.counterBytes;

/** Write units of the gate's write, at any rate. */
export const GATE_WRITE_UNITS = writeUnitsOf(gateItemBytes());

/**
 * Write units a second on the busiest of a token's gate partitions at a steady rate: a token's
 * limit decides how many shard items its gate has, and each request writes one of them, chosen at
 * random (a request whose shard is full writes a second one: near the limit only).
 */
export const gatePartitionLoad = (requestsPerMinute: number) =>
  ((requestsPerMinute / 60) * GATE_WRITE_UNITS) / shardCount(requestsPerMinute);

/** The row: one plain put of an item under 1 KB. Its spend is folded later, by the stream consumer. */
export const ROW_WRITE_UNITS = 1;

export interface CostInputs {
  /** Lambda memory of the proxy function. */
  memoryMb: number;
  /** How long the provider takes to answer; the function is billed while it waits. */
  upstreamSeconds: number;
  /**
   * The proxy's own waiting per request: the token gate's call before forwarding and the row's
   * put after the answer (the invocation ends when the row is stored).
   */
  storeWaitMs: number;
  /** The proxy's CPU per request on a full vCPU; Lambda gives one vCPU at 1,769 MB, proportionally less below. */
  cpuMsPerRequest: number;
  /** DynamoDB write units per request on the request path: the gate's count (`GATE_WRITE_UNITS`) and the row's put (`ROW_WRITE_UNITS`). */
  writeUnitsPerRequest: number;
  /** Read units per request: 0 when the provider key is in the instance's 5-minute cache and the token has no budget. */
  readUnitsPerRequest: number;
  /** Cold starts per million requests; each is billed for its init and reads the admin secret once. */
  coldStartsPerMillion: number;
  coldStartInitMs: number;
  /** Traffic per month, which decides how many rows the stream consumer finds per batch. */
  monthlyRequests: number;
  /** The stream consumer's batching window (`consumerWindowSeconds`): its batches gather this long at most. */
  batchingWindowSeconds: number;
  /** Billed time of one stream-consumer batch (a few conditional writes in parallel). */
  consumerMsPerBatch: number;
  /** Rollup writes per batch: the hour and the day, when the batch's rows share a token and model. */
  rollupWritesPerBatch: number;
  /** Spend writes per batch: one per budget subject in it (its token; each requester label and tag adds one more). */
  spendWritesPerBatch: number;
  /**
   * Read units per batch of the budget-alert check (docs/alerts.md): each subject's budget and month
   * items, eventually consistent (half a unit each), for the batch's one token without a requester or tags.
   */
  alertReadUnitsPerBatch: number;
  /** Bytes of Embedded Metric Format lines per batch: one line of about 700 bytes per provider and model in it. */
  metricBytesPerBatch: number;
  /** Objects the usage export writes per batch: one per UTC day its rows fall on, nearly always one. */
  exportObjectsPerBatch: number;
}

/** Traffic per month the assumptions price. */
const ASSUMED_MONTHLY_REQUESTS = 1_000_000;

/** The assumptions docs/deploy.md prices, stated once. */
export const ASSUMED: CostInputs = {
  memoryMb: DEFAULTS.memoryMb,
  upstreamSeconds: 3,
  storeWaitMs: 15,
  // One request at a time, as a Lambda instance serves them: the committed benchmark's c=1 figure
  // for a stored-key request (bench/RESULTS.md), not the c=64 one of a process kept busy.
  cpuMsPerRequest: 5.9,
  writeUnitsPerRequest: GATE_WRITE_UNITS + ROW_WRITE_UNITS,
  readUnitsPerRequest: 0,
  coldStartsPerMillion: 1_000,
  coldStartInitMs: 300,
  monthlyRequests: ASSUMED_MONTHLY_REQUESTS,
  batchingWindowSeconds: DEFAULTS.consumerWindowSeconds,
  consumerMsPerBatch: 50,
  rollupWritesPerBatch: 2,
  spendWritesPerBatch: 1,
  alertReadUnitsPerBatch: 1,
  metricBytesPerBatch: 3 * 700,
  exportObjectsPerBatch: 1,
};

/** One vCPU at this memory size (Lambda's documented ratio). */
export const FULL_VCPU_MB = 1769;
const SECONDS_PER_MONTH = 30 * 86_400;

export interface CostLine {
  item: string;
  usdPerMillion: number;
}

export interface Cost {
  inputs: CostInputs;
  billedMsPerRequest: number;
  rowsPerConsumerBatch: number;
  /** The consumer's line if every row arrived alone in its batch. */
  consumerWorstCaseUsdPerMillion: number;
  /** The usage export's PUTs if every row arrived alone in its batch. */
  exportWorstCaseUsdPerMillion: number;
  lines: CostLine[];
  usdPerMillion: number;
}

/** Every write unit a request costs on average, the consumer's share included: the request path's, and the batch's rollup and spend writes spread over its rows. */
export const allWriteUnitsPerRequest = (cost: Cost) =>
  cost.inputs.writeUnitsPerRequest +
  (cost.inputs.rollupWritesPerBatch + cost.inputs.spendWritesPerBatch) / cost.rowsPerConsumerBatch;

/** Cost per million requests for these inputs. */
export function costPerMillion(inputs: CostInputs = ASSUMED): Cost {
  const million = 1_000_000;
  const share = Math.min(1, inputs.memoryMb / FULL_VCPU_MB);
  const gb = inputs.memoryMb / 1024;
  const billedMs = inputs.upstreamSeconds * 1000 + inputs.storeWaitMs + inputs.cpuMsPerRequest / share;
  // The mapping invokes when its batching window closes or its batch is full; one shard.
  const rowsPerBatch = Math.max(
    1,
    Math.min(
      STREAM_MAPPING.batchSize,
      (inputs.monthlyRequests / SECONDS_PER_MONTH) * Math.max(1, inputs.batchingWindowSeconds),
    ),
  );
  const consumerBatch =
    PRICES.lambdaPerMillionRequests / million +
    (CONSUMER_MEMORY_MB / 1024) * (inputs.consumerMsPerBatch / 1000) * PRICES.lambdaArmPerGbSecond +
    ((inputs.rollupWritesPerBatch + inputs.spendWritesPerBatch) * PRICES.dynamoPerMillionWriteUnits) / million;
  const lines: CostLine[] = [
    { item: 'Lambda requests', usdPerMillion: PRICES.lambdaPerMillionRequests },
    { item: 'Lambda duration', usdPerMillion: gb * (billedMs / 1000) * million * PRICES.lambdaArmPerGbSecond },
    {
      item: 'Lambda cold-start init',
      usdPerMillion: gb * (inputs.coldStartInitMs / 1000) * inputs.coldStartsPerMillion * PRICES.lambdaArmPerGbSecond,
    },
    { item: 'DynamoDB writes', usdPerMillion: inputs.writeUnitsPerRequest * PRICES.dynamoPerMillionWriteUnits },
    { item: 'DynamoDB reads', usdPerMillion: inputs.readUnitsPerRequest * PRICES.dynamoPerMillionReadUnits },
    {
      item: 'Secrets Manager (admin key, once per cold start)',
      usdPerMillion: (inputs.coldStartsPerMillion / 10_000) * PRICES.secretsPer10kCalls,
    },
    { item: 'Stream consumer (rollups and spend)', usdPerMillion: (million / rowsPerBatch) * consumerBatch },
    {
      item: 'Stream consumer (budget alert checks)',
      usdPerMillion:
        ((million / rowsPerBatch) * inputs.alertReadUnitsPerBatch * PRICES.dynamoPerMillionReadUnits) / million,
    },
    {
      item: 'Usage metrics (EMF log lines)',
      usdPerMillion: ((million / rowsPerBatch) * inputs.metricBytesPerBatch * PRICES.logsIngestionPerGb) / 1e9,
    },
    {
      item: 'Usage export (S3 PUTs, one object per batch)',
      usdPerMillion: ((million / rowsPerBatch) * inputs.exportObjectsPerBatch * PRICES.s3PutPer1000) / 1000,
    },
    {
      item: 'Usage export (S3 storage, each month kept)',
      usdPerMillion: ((million * EXPORT_BYTES_PER_ROW) / 1e9) * PRICES.s3StoragePerGbMonth,
    },
  ];
  return {
    inputs,
    billedMsPerRequest: billedMs,
    rowsPerConsumerBatch: rowsPerBatch,
    consumerWorstCaseUsdPerMillion: million * consumerBatch,
    exportWorstCaseUsdPerMillion: (million * inputs.exportObjectsPerBatch * PRICES.s3PutPer1000) / 1000,
    lines,
    usdPerMillion: lines.reduce((sum, line) => sum + line.usdPerMillion, 0),
  };
}

/**
 * Lambda Managed Instances (`-c managedInstances=true`, docs/deploy.md, "Managed instances"): EC2
 * instances billed by the hour whether busy or not, plus Lambda's management fee on their price,
 * plus the requests; the VPC's NAT gateway by the hour and by the GB it carries. The instance is an
 * assumption to check against the EC2 price list: a c7g.large (2 vCPUs, 4 GB: two execution
 * environments of one vCPU and 2 GB), eu-west-1, on demand.
 */
export const MANAGED_PRICES = {
  instancePerHour: 0.0792,
  instanceVcpus: 2,
  managementFeeShare: 0.15,
  /** Lambda keeps at least three instances, one per Availability Zone, whatever the traffic. */
  minInstances: 3,
  natGatewayPerHour: 0.048,
  natPerGb: 0.048,
} as const;

/** What a request moves through the NAT gateway (its request and answer to the provider): a few KB of chat. */
export const NAT_BYTES_PER_REQUEST = 8 * 1024;

export interface ManagedCost {
  requestsPerSecond: number;
  /** Requests in flight at once: the rate times the answer time. */
  concurrent: number;
  instances: number;
  /** Per million requests: instances with the fee, the NAT gateway, the requests, and the store and consumer lines of the standard model. */
  usdPerMillion: number;
  /** The standard function's cost at the same traffic (consumer batches fill as they would). */
  standardUsdPerMillion: number;
}

const HOURS_PER_MONTH = SECONDS_PER_MONTH / 3600;

/** Managed instances at a steady rate, beside the standard function at the same traffic. */
export function managedInstancesCost(
  requestsPerSecond: number,
  concurrencyPerEnvironment: number,
  inputs: CostInputs = ASSUMED,
): ManagedCost {
  const monthlyRequests = requestsPerSecond * SECONDS_PER_MONTH;
  const standard = costPerMillion({ ...inputs, monthlyRequests });
  const concurrent = requestsPerSecond * (inputs.upstreamSeconds + inputs.storeWaitMs / 1000);
  // One execution environment per vCPU; each serves `concurrencyPerEnvironment` requests at once,
  // and its CPU (cpuMsPerRequest each) is far from full at any of these rates.
  const environments = Math.ceil(concurrent / concurrencyPerEnvironment);
  const instances = Math.max(MANAGED_PRICES.minInstances, Math.ceil(environments / MANAGED_PRICES.instanceVcpus));
  const monthly =
    instances * MANAGED_PRICES.instancePerHour * (1 + MANAGED_PRICES.managementFeeShare) * HOURS_PER_MONTH +
    MANAGED_PRICES.natGatewayPerHour * HOURS_PER_MONTH +
    ((monthlyRequests * NAT_BYTES_PER_REQUEST) / 1e9) * MANAGED_PRICES.natPerGb;
  // Everything but the function's own lines is the same: the store, the consumer, the export.
  const shared = standard.lines
    .filter((line) => !line.item.startsWith('Lambda duration') && !line.item.startsWith('Lambda cold-start'))
    .reduce((sum, line) => sum + line.usdPerMillion, 0);
  return {
    requestsPerSecond,
    concurrent,
    instances,
    usdPerMillion: (monthly / monthlyRequests) * 1e6 + shared,
    standardUsdPerMillion: standard.usdPerMillion,
  };
}
