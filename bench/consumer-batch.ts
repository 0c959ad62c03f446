/**
 * What one batch of the stream consumer costs: the consumer Lambda's own work (stream records to
 * rows, the fold, one conditional ADD per rollup item) against DynamoDB Local, one batch at a
 * time as Lambda delivers a shard's batches, timed and with this process's CPU. The cost model
 * stretches that CPU by the consumer's share of a vCPU (lib/constructs/stats-consumer.ts).
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { loadConfig } from '../lambda/config';
import { buildFoldDeps } from '../lambda/deps';
import { streamedRows, type UsageStreamRecord } from '../lambda/store/dynamodb/stream-records';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { ensureTables } from '../lambda/store/dynamodb/create-tables';
import { jsonLogger } from '../lambda/logger';
import type { UsageRow } from '../lambda/usage/usage-row';

export interface ConsumerBatchFigures {
  rowsPerBatch: number;
  batches: number;
  /** Medians per batch on this machine (a full core). */
  wallMs: number;
  cpuMs: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** Rows of one token and model, as the benchmark's traffic: a batch's rows share their hour and day items. */
function record(sequence: number): UsageStreamRecord {
  const ts = new Date().toISOString();
  const row: UsageRow = {
    account_id: 'acct-consumer-bench',
    id: `req-${sequence}`,
    ts,
    provider: 'prov-b',
    kind: 'chat',
    model: 'gpt-4o-mini',
    input_tokens: 20,
    output_tokens: 40,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0.000027,
    cost_nanos: 27_000,
    priced: true,
    latency_ms: 3,
    status_code: 200,
    cached: false,
    saved_usd: 0,
    saved_nanos: 0,
    stream: false,
    mode: 'stored',
    token_id: 'tok-consumer-bench',
  };
  return { eventName: 'INSERT', dynamodb: { NewImage: marshall({ ...row, ts_id: `${ts}#${row.id}` }, { removeUndefinedValues: true }), SequenceNumber: String(1e20 + sequence) } };
}

export async function measureConsumerBatches(endpoint: string, options: { rowsPerBatch: number; warmup: number; batches: number }): Promise<ConsumerBatchFigures> {
  const config = loadConfig({ DYNAMODB_ENDPOINT: endpoint, TABLE_PREFIX: 'bench-consumer-', ADMIN_KEY: 'bench-consumer-admin-key-0123456789' });
  await ensureTables(createDynamoClients({ region: config.region, endpoint }).raw, config.tables);
  const { usageStats } = buildFoldDeps(config, jsonLogger);
  let sequence = 0;
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < options.warmup + options.batches; i++) {
    const records = Array.from({ length: options.rowsPerBatch }, () => record(++sequence));
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    const { failed } = await usageStats.fold(streamedRows(records, 'bench-shard'));
    const used = process.cpuUsage(cpuStart);
    if (failed.length) throw new Error(`the fold failed ${failed.length} rows of a batch`);
    if (i < options.warmup) continue;
    wall.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
  }
  return { rowsPerBatch: options.rowsPerBatch, batches: options.batches, wallMs: median(wall), cpuMs: median(cpu) };
}
