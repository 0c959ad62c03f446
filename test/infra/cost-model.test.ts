/**
 * The cost model (lib/cost-model.ts) against a hand calculation of the same assumptions, and its
 * response to each input, so the figure docs/deploy.md prints is the arithmetic it claims to be.
 */
import { STREAM_MAPPING } from '../../lib/constructs/stats-consumer';
import {
  ASSUMED,
  athenaQueryUsd,
  costPerMillion,
  MANAGED_PRICES,
  managedInstancesCost,
  NAT_BYTES_PER_REQUEST,
  EXPORT_BYTES_PER_ROW,
  FULL_VCPU_MB,
  GATE_ITEM,
  GATE_WRITE_UNITS,
  gateItemBytes,
  gatePartitionLoad,
  PARTITION_WRITE_UNITS_PER_SECOND,
  PRICES,
  ROW_WRITE_UNITS,
  allWriteUnitsPerRequest,
} from '../../lib/cost-model';
import { DEFAULTS } from '../../lib/settings';
import { MAX_REQUESTS_PER_MINUTE } from '../../lambda/auth/token-limits';

const line = (cost: ReturnType<typeof costPerMillion>, item: string) =>
  cost.lines.find((l) => l.item.startsWith(item))!.usdPerMillion;

it('prices the stated assumptions as a hand calculation does', () => {
  const a = ASSUMED;
  expect(a.memoryMb).toBe(DEFAULTS.memoryMb);
  const billedMs = a.upstreamSeconds * 1000 + a.storeWaitMs + a.cpuMsPerRequest * (FULL_VCPU_MB / a.memoryMb);
  const duration = (a.memoryMb / 1024) * (billedMs / 1000) * 1e6 * PRICES.lambdaArmPerGbSecond;
  const rowsPerBatch = (a.monthlyRequests / (30 * 86_400)) * a.batchingWindowSeconds;
  const perBatch =
    PRICES.lambdaPerMillionRequests / 1e6 +
    (128 / 1024) * (a.consumerMsPerBatch / 1000) * PRICES.lambdaArmPerGbSecond +
    ((a.rollupWritesPerBatch + a.spendWritesPerBatch) * PRICES.dynamoPerMillionWriteUnits) / 1e6;
  const init = (a.memoryMb / 1024) * (a.coldStartInitMs / 1000) * a.coldStartsPerMillion * PRICES.lambdaArmPerGbSecond;
  const expected =
    PRICES.lambdaPerMillionRequests +
    duration +
    init +
    a.writeUnitsPerRequest * PRICES.dynamoPerMillionWriteUnits +
    (a.coldStartsPerMillion / 10_000) * PRICES.secretsPer10kCalls +
    (1e6 / rowsPerBatch) * perBatch +
    // Budget alert checks: the batch's budget reads; usage metrics: the batch's EMF log lines.
    ((1e6 / rowsPerBatch) * a.alertReadUnitsPerBatch * PRICES.dynamoPerMillionReadUnits) / 1e6 +
    ((1e6 / rowsPerBatch) * a.metricBytesPerBatch * PRICES.logsIngestionPerGb) / 1e9 +
    // The usage export: one S3 PUT per batch, and a month's storage of the gzipped rows.
    ((1e6 / rowsPerBatch) * a.exportObjectsPerBatch * PRICES.s3PutPer1000) / 1000 +
    ((1e6 * EXPORT_BYTES_PER_ROW) / 1e9) * PRICES.s3StoragePerGbMonth;
  const cost = costPerMillion(a);
  expect(cost.billedMsPerRequest).toBeCloseTo(billedMs, 6);
  expect(cost.rowsPerConsumerBatch).toBeCloseTo(rowsPerBatch, 6);
  expect(cost.usdPerMillion).toBeCloseTo(expected, 6);
  expect(cost.consumerWorstCaseUsdPerMillion).toBeCloseTo(1e6 * perBatch, 6);
  expect(cost.exportWorstCaseUsdPerMillion).toBeCloseTo(1e6 * (PRICES.s3PutPer1000 / 1000), 9);
});

it('moves with each input in the direction it should', () => {
  const base = costPerMillion(ASSUMED);
  expect(costPerMillion({ ...ASSUMED, memoryMb: 512 }).usdPerMillion).toBeGreaterThan(base.usdPerMillion);
  expect(costPerMillion({ ...ASSUMED, upstreamSeconds: 6 }).usdPerMillion).toBeGreaterThan(base.usdPerMillion);
  expect(
    line(costPerMillion({ ...ASSUMED, writeUnitsPerRequest: ASSUMED.writeUnitsPerRequest + 1 }), 'DynamoDB writes') -
      line(base, 'DynamoDB writes'),
  ).toBeCloseTo(PRICES.dynamoPerMillionWriteUnits, 9);
  // Busier traffic fills the consumer's batches: its line shrinks, never below one batch of 1,000 rows per 1,000 rows.
  expect(line(costPerMillion({ ...ASSUMED, monthlyRequests: 100_000_000 }), 'Stream consumer')).toBeLessThan(
    line(base, 'Stream consumer'),
  );
  expect(costPerMillion({ ...ASSUMED, monthlyRequests: 1e12 }).rowsPerConsumerBatch).toBe(STREAM_MAPPING.batchSize);
  // A quieter month leaves each row alone in its batch: the worst case.
  expect(line(costPerMillion({ ...ASSUMED, monthlyRequests: 1_000 }), 'Stream consumer')).toBeCloseTo(
    base.consumerWorstCaseUsdPerMillion,
    9,
  );
});

it('prices an Athena query by the gzipped rows it scans, at least 10 MB', () => {
  expect(athenaQueryUsd(1)).toBeCloseTo(((10 * 1024 ** 2) / 1e12) * PRICES.athenaPerTbScanned, 12);
  expect(athenaQueryUsd(1e6)).toBeCloseTo(((1e6 * EXPORT_BYTES_PER_ROW) / 1e12) * PRICES.athenaPerTbScanned, 12);
  // Busier traffic fills batches: fewer export PUTs per row.
  const puts = (monthlyRequests: number) =>
    line(costPerMillion({ ...ASSUMED, monthlyRequests }), 'Usage export (S3 PUTs');
  expect(puts(100_000_000)).toBeLessThan(puts(ASSUMED.monthlyRequests));
});

it("prices the token gate's write as one unit at any rate (its size against DynamoDB Local: test/integration/store/gate-item-size.test.ts)", () => {
  expect(gateItemBytes()).toBe(GATE_ITEM.baseBytes + GATE_ITEM.counterBytes);
  expect(gateItemBytes()).toBeLessThan(1024);
  expect(GATE_WRITE_UNITS).toBe(1);
  expect(ASSUMED.writeUnitsPerRequest).toBe(GATE_WRITE_UNITS + ROW_WRITE_UNITS);
});

it("keeps one token's busiest gate partition under half its write limit up to the highest per-token limit", () => {
  // 1,000 requests a second on one token: four gate items, 250 write units a second each.
  expect(gatePartitionLoad(60_000)).toBe(250);
  expect(gatePartitionLoad(MAX_REQUESTS_PER_MINUTE)).toBeLessThanOrEqual(PARTITION_WRITE_UNITS_PER_SECOND / 2);
  // A limit one gate item carries alone: its whole rate on one partition.
  expect(gatePartitionLoad(15_000)).toBe(250);
  expect(gatePartitionLoad(100)).toBeCloseTo(100 / 60, 9);
});

it('writes at most 3 units a request in all for a busy token with a stored key, a requester label and one tag, its consumer batches full', () => {
  // The token, the requester and the tag: 3 spend writes a batch; the hour and day rollups, and the tag's hour and day.
  const profile = { ...ASSUMED, spendWritesPerBatch: 3, rollupWritesPerBatch: 4 };
  expect(ASSUMED.writeUnitsPerRequest).toBe(2);
  // 1,000 requests a second fill the consumer's batches (1,000 rows).
  const busy = costPerMillion({ ...profile, monthlyRequests: 1_000 * 30 * 86_400 });
  expect(busy.rowsPerConsumerBatch).toBe(STREAM_MAPPING.batchSize);
  expect(allWriteUnitsPerRequest(busy)).toBeLessThanOrEqual(3);
  // A quiet month puts few rows in each batch: the consumer's writes weigh more per request, never more than its batches.
  const quiet = costPerMillion(profile);
  expect(allWriteUnitsPerRequest(quiet)).toBeCloseTo(2 + 7 / quiet.rowsPerConsumerBatch, 9);
});

it('prices the default stack, at its default memory (which holds a 6 MB request: lambda-memory.test.ts), at most $10 per million at a 3 s answer', () => {
  expect(ASSUMED.memoryMb).toBe(DEFAULTS.memoryMb);
  expect(ASSUMED.batchingWindowSeconds).toBe(DEFAULTS.consumerWindowSeconds);
  expect(costPerMillion(ASSUMED).usdPerMillion).toBeLessThanOrEqual(10);
});

it("trades the consumer's per-batch lines against the window: a longer one is cheaper, never below the full batch", () => {
  const perBatch = (window: number) =>
    costPerMillion({ ...ASSUMED, batchingWindowSeconds: window })
      .lines.filter((l) => /^(Stream consumer|Usage metrics|Usage export \(S3 PUTs)/.test(l.item))
      .reduce((sum, l) => sum + l.usdPerMillion, 0);
  expect(perBatch(60)).toBeLessThan(perBatch(10));
  expect(perBatch(300)).toBeLessThan(perBatch(60));
  // Six times the window, six times the rows per batch at this traffic: a sixth of the per-batch cost.
  expect(perBatch(60)).toBeCloseTo(perBatch(10) / 6, 6);
});

it('prices managed instances at a steady rate as a hand calculation does, beside the standard function', () => {
  const hours = (30 * 86_400) / 3600;
  for (const rate of [10, 50]) {
    const monthly = rate * 30 * 86_400;
    const at = managedInstancesCost(rate, DEFAULTS.managedInstancesConcurrency);
    const inFlight = rate * (ASSUMED.upstreamSeconds + ASSUMED.storeWaitMs / 1000);
    const instances = Math.max(3, Math.ceil(Math.ceil(inFlight / DEFAULTS.managedInstancesConcurrency) / 2));
    expect(at.instances).toBe(instances);
    const standard = costPerMillion({ ...ASSUMED, monthlyRequests: monthly });
    const functionLines = line(standard, 'Lambda duration') + line(standard, 'Lambda cold-start');
    const fixed =
      instances * MANAGED_PRICES.instancePerHour * 1.15 * hours +
      MANAGED_PRICES.natGatewayPerHour * hours +
      ((monthly * NAT_BYTES_PER_REQUEST) / 1e9) * MANAGED_PRICES.natPerGb;
    expect(at.usdPerMillion).toBeCloseTo((fixed / monthly) * 1e6 + standard.usdPerMillion - functionLines, 6);
    expect(at.standardUsdPerMillion).toBeCloseTo(standard.usdPerMillion, 9);
  }
  // Idle instances are paid for: the standard function is cheaper at 10 a second, managed instances at 50.
  const slow = managedInstancesCost(10, DEFAULTS.managedInstancesConcurrency);
  const busy = managedInstancesCost(50, DEFAULTS.managedInstancesConcurrency);
  expect(slow.usdPerMillion).toBeGreaterThan(slow.standardUsdPerMillion);
  expect(busy.usdPerMillion).toBeLessThan(busy.standardUsdPerMillion);
});
