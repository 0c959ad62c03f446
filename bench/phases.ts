/**
 * The measuring phases. Each takes the running contenders and returns figures;
 * all loops are bounded by counts or deadlines.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import type { Contender, ContenderId } from './contenders';
import type { UpstreamShape, BenchUpstream } from './fake-upstream';
import type { LoadClient } from './load-client';
import type { LatencyResult } from './load-protocol';
import { cpuMs, memoryMb, sampleRss } from './process-stats';
import type { LatencyFigures, Resources, StreamFigures } from './results';
import { percentiles, type Percentiles } from './stats';

export const JSON_SHAPE: UpstreamShape = { latencyMs: 0, chunks: 20, chunkIntervalMs: 0 };
export const STREAM_SHAPE: UpstreamShape = { latencyMs: 0, chunks: 10, chunkIntervalMs: 5 };

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function latencyFigures(result: LatencyResult, values = result.totalMs): LatencyFigures {
  return { ...percentiles(values), errors: result.errors, mismatches: result.mismatches };
}

function ensureClean(contender: Contender, result: LatencyResult, what: string): void {
  if (result.errors || result.mismatches) {
    const statuses = Object.entries(result.statuses).map(([status, n]) => `${status}×${n}`).join(' ');
    process.stdout.write(`  ! ${contender.label} ${what}: ${result.errors} errors, ${result.mismatches} mismatches (${statuses}) ${result.firstError ?? ''}\n`);
  }
}

/** One DynamoDB Local round trip as the proxy's own client makes it (SDK, signing, keep-alive). */
export async function measureStoreRoundTrip(endpoint: string, table: string, count: number): Promise<Percentiles> {
  const { doc, raw } = createDynamoClients({ region: 'eu-west-1', endpoint });
  const times: number[] = [];
  for (let i = 0; i < count + 20; i++) {
    const started = performance.now();
    await doc.send(new GetCommand({ TableName: table, Key: { pk: 'ACCOUNT#bench-none', sk: 'ACCOUNT' } }));
    if (i >= 20) times.push(performance.now() - started);
  }
  raw.destroy();
  return percentiles(times);
}

export async function nonStreaming(
  load: LoadClient,
  contenders: Contender[],
  options: { concurrency: number; warmup: number; count: number; measureResources?: { storePid?: number; proxyPids: Set<number> } },
): Promise<{ figures: Partial<Record<ContenderId, LatencyFigures>>; resources: Partial<Record<ContenderId | 'dynamoDbLocal', Resources>> }> {
  const figures: Partial<Record<ContenderId, LatencyFigures>> = {};
  const resources: Partial<Record<ContenderId | 'dynamoDbLocal', Resources>> = {};
  for (const contender of contenders) {
    const measure = options.measureResources && contender.pid !== undefined;
    const pid = contender.pid;
    const storePid = options.measureResources?.storePid;
    const usesStore = pid !== undefined && options.measureResources?.proxyPids.has(pid);
    const idle = measure ? memoryMb(pid!).rss : 0;
    const cpuBefore = measure ? cpuMs(pid!) : 0;
    const storeBefore = measure && usesStore && storePid ? cpuMs(storePid) : 0;
    const rss = measure ? sampleRss(pid!) : undefined;
    const result = await load.latency({ spec: contender.spec(false), concurrency: options.concurrency, warmup: options.warmup, count: options.count });
    // Rows are written just after each answer: let the last ones land before reading the CPU counters.
    if (measure) await settle(500);
    ensureClean(contender, result, `c=${options.concurrency}`);
    figures[contender.id] = latencyFigures(result);
    if (measure) {
      const requests = options.warmup + options.count;
      resources[contender.id] = {
        cpuMsPerRequest: (cpuMs(pid!) - cpuBefore) / requests,
        requestsMeasured: requests,
        rssIdleMb: idle,
        rssMaxMb: rss!.stop(),
        ...(usesStore && storePid ? { storeCpuMsPerRequest: (cpuMs(storePid) - storeBefore) / requests } : {}),
      };
    }
    process.stdout.write(`  ${contender.label.padEnd(42)} c=${options.concurrency} p50 ${figures[contender.id]!.p50.toFixed(2)} ms  p99 ${figures[contender.id]!.p99.toFixed(2)} ms\n`);
  }
  return { figures, resources };
}

export async function streaming(
  load: LoadClient,
  upstream: BenchUpstream,
  contenders: Contender[],
  options: { concurrency: number; warmup: number; count: number },
): Promise<Partial<Record<ContenderId, StreamFigures>>> {
  upstream.setShape(STREAM_SHAPE);
  const out: Partial<Record<ContenderId, StreamFigures>> = {};
  try {
    for (const contender of contenders) {
      const spec = contender.spec(true);
      const result = await load.latency({ spec, concurrency: options.concurrency, warmup: options.warmup, count: options.count });
      ensureClean(contender, result, `stream c=${options.concurrency}`);
      out[contender.id] = {
        firstByte: latencyFigures(result, result.firstByteMs),
        total: percentiles(result.totalMs),
        ...(spec.readStamps ? { eventLag: percentiles(result.eventLagMs) } : {}),
      };
      const lag = out[contender.id]!.eventLag;
      process.stdout.write(
        `  ${contender.label.padEnd(42)} stream c=${options.concurrency} first byte p50 ${out[contender.id]!.firstByte.p50.toFixed(2)} ms` +
          (lag ? `  event lag p50 ${lag.p50.toFixed(3)} p99 ${lag.p99.toFixed(3)} ms` : '') +
          '\n',
      );
    }
  } finally {
    upstream.setShape(JSON_SHAPE);
  }
  return out;
}

export async function throughputRamp(
  load: LoadClient,
  contenders: Contender[],
  steps: Array<{ concurrency: number; durationMs: number }>,
  rssFor: (contender: Contender, mb: number) => void,
) {
  const out: Partial<Record<ContenderId, { steps: Awaited<ReturnType<LoadClient['throughput']>>['steps']; maxRps: number; atConcurrency: number }>> = {};
  for (const contender of contenders) {
    const rss = contender.pid !== undefined ? sampleRss(contender.pid) : undefined;
    const result = await load.throughput({ spec: contender.spec(false), steps });
    if (rss) rssFor(contender, rss.stop());
    const clean = result.steps.filter((step) => step.errors === 0);
    const best = clean.reduce((top, step) => (step.rps > top.rps ? step : top), { rps: 0, concurrency: 0 } as { rps: number; concurrency: number });
    out[contender.id] = { steps: result.steps, maxRps: best.rps, atConcurrency: best.concurrency };
    const errors = result.steps.map((step) => `${step.concurrency}:${step.errors}`).join(' ');
    process.stdout.write(`  ${contender.label.padEnd(42)} max ${best.rps.toFixed(0)} req/s at c=${best.concurrency} (errors by concurrency ${errors})\n`);
  }
  return out;
}
