/**
 * The stream consumer's batch is measured, not assumed: the consumer's own fold against DynamoDB
 * Local, and the cost model prices that batch at the consumer's share of a vCPU.
 */
import { measureConsumerBatches } from '../../bench/consumer-batch';
import { consumerBatchMs, costPerMillion, FULL_VCPU_MB, STREAM_CONSUMER, streamConsumerUsdPerMillion, type CostInputs } from '../../bench/cost-model';

test('a measured batch: the fold of its rows, timed, and priced with its CPU stretched to the consumer size', async () => {
  const batch = await measureConsumerBatches(process.env.DYNAMODB_ENDPOINT!, { rowsPerBatch: 4, warmup: 1, batches: 3 });
  expect(batch).toEqual({ rowsPerBatch: 4, batches: 3, wallMs: expect.any(Number), cpuMs: expect.any(Number) });
  expect(batch.wallMs).toBeGreaterThan(0);
  expect(batch.cpuMs).toBeGreaterThan(0);
  const ms = consumerBatchMs(batch);
  expect(ms).toBeCloseTo(batch.wallMs + batch.cpuMs * (FULL_VCPU_MB / STREAM_CONSUMER.memoryMb - 1), 9);

  const inputs: CostInputs = { upstreamSeconds: 3, proxyOverheadMs: 4, tailAfterResponseMs: 30, writeUnitsPerRequest: 5, readUnitsPerRequest: 4, responseBytes: 600, coldStartsPerMillion: 0, coldStartInitMs: 0 };
  const measured = costPerMillion({ ...inputs, consumerBatch: batch }, 256);
  const line = measured.lines.find((l) => l.item.startsWith('Stream consumer'))!;
  expect(line.basis).toContain(`(measured: a batch of 4 rows took ${batch.wallMs.toFixed(1)} ms on DynamoDB Local`);
  expect(measured.streamConsumer!.worstCaseUsdPerMillion).toBeCloseTo(streamConsumerUsdPerMillion(1, ms), 9);
  const assumed = costPerMillion(inputs, 256).lines.find((l) => l.item.startsWith('Stream consumer'))!;
  expect(assumed.basis).toContain('assumed: not measured in this run');
});
