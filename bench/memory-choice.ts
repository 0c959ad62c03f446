/**
 * The default memory size, derived from one Lambda instance's measured figures
 * (bench/lambda-memory.ts) and the committed benchmark run's store counts
 * (bench/results.json). Pure functions, so the published table can be checked.
 */
import { FULL_VCPU_MB, MONTHLY_REQUESTS, PRICES, STREAM_CONSUMER as CONSUMER, UPSTREAM_SECONDS, rowsPerBatchAt, streamConsumerUsdPerMillion } from './cost-model';

export { UPSTREAM_SECONDS };

export interface InstanceFigures {
  invocations: number;
  /** Median process CPU per stored-key invocation until the answer's prelude, on this machine (a full core). */
  cpuBeforeAnswerMs: number;
  /** The same until the invocation ended (its row write included). */
  cpuTotalMs: number;
  /** Median wall time until the prelude and until the end, on this machine (store and upstream waits included). */
  wallBeforeAnswerMs: number;
  wallTotalMs: number;
  peakRssMb: number;
  /** Peak RSS after requests with a body at the 6 MB limit. */
  peakRssLargeBodyMb: number;
}

export const SIZES_MB = [128, 256, 512, 1024] as const;
/**
 * What the proxy may add before the answer in Lambda: the specification's cache hit answers in
 * about 80 ms, and a hit's path costs the same CPU as a stored-key request, leaving 30 ms for
 * its store round trips in AWS.
 */
export const ADDED_LATENCY_BUDGET_MS = 50;
/**
 * The peak RSS may use at most this share of the size: Lambda ends an instance that reaches its
 * limit. Two runs of the same code measured the 6 MB-body peak at 115 and 126 MB, so a 10 % margin
 * sits inside the measurement's own spread; 20 % keeps that spread and V8's heap growth clear.
 */
export const RSS_HEADROOM = 0.8;

interface CommittedRun {
  source: { commit: string };
  cost: { lines: Array<{ item: string; usdPerMillion: number }>; streamConsumer?: { usdPerMillion: number } };
}

export interface SizeFigures {
  memoryMb: number;
  cpuShare: number;
  addedBeforeAnswerMs: number;
  billedMs: number;
  lambdaUsd: number;
  storeAndKeysUsd: number;
  consumerUsd: number;
  totalUsd: number;
  fitsMemory: boolean;
  withinLatency: boolean;
}

export interface MemoryChoice {
  fromCommit: string;
  sizes: SizeFigures[];
  chosenMb: number;
}

const r2 = (value: number) => Math.round(value * 100) / 100;

export function chooseMemory(figures: InstanceFigures, run: CommittedRun): MemoryChoice {
  const million = 1_000_000;
  // Everything but the Lambda lines: DynamoDB units counted per request, KMS, Secrets Manager, cold-start init.
  const storeAndKeysUsd = run.cost.lines.filter((line) => !/^(Lambda (requests|duration)|Stream consumer)/.test(line.item)).reduce((sum, line) => sum + line.usdPerMillion, 0);
  // The committed run's consumer line (a measured batch when it has one), else the model's assumption.
  const consumerUsd = run.cost.streamConsumer?.usdPerMillion ?? streamConsumerUsdPerMillion(rowsPerBatchAt(MONTHLY_REQUESTS));
  const sizes = SIZES_MB.map((memoryMb): SizeFigures => {
    const cpuShare = Math.min(1, memoryMb / FULL_VCPU_MB);
    const slowdown = 1 / cpuShare - 1;
    const addedBeforeAnswerMs = figures.wallBeforeAnswerMs + figures.cpuBeforeAnswerMs * slowdown;
    const billedMs = UPSTREAM_SECONDS * 1000 + figures.wallTotalMs + figures.cpuTotalMs * slowdown;
    const lambdaUsd = PRICES.lambdaPerMillionRequests + (memoryMb / 1024) * (billedMs / 1000) * million * PRICES.lambdaArmPerGbSecond;
    return {
      memoryMb,
      cpuShare: Number(cpuShare.toFixed(3)),
      addedBeforeAnswerMs: r2(addedBeforeAnswerMs),
      billedMs: r2(billedMs),
      lambdaUsd: r2(lambdaUsd),
      storeAndKeysUsd: r2(storeAndKeysUsd),
      consumerUsd: r2(consumerUsd),
      totalUsd: r2(lambdaUsd + storeAndKeysUsd + consumerUsd),
      fitsMemory: figures.peakRssLargeBodyMb <= memoryMb * RSS_HEADROOM,
      withinLatency: addedBeforeAnswerMs <= ADDED_LATENCY_BUDGET_MS,
    };
  });
  const eligible = sizes.filter((size) => size.fitsMemory && size.withinLatency).sort((a, b) => a.totalUsd - b.totalUsd);
  return { fromCommit: run.source.commit, sizes, chosenMb: eligible[0]?.memoryMb ?? SIZES_MB[SIZES_MB.length - 1] };
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);

/** The cost table rows docs/deploy.md quotes, one line per size. */
export function costTableRows(choice: MemoryChoice): string[] {
  return choice.sizes.map((s) => {
    const name = s.memoryMb === choice.chosenMb ? `**${s.memoryMb} MB (default)**` : `${s.memoryMb} MB`;
    const verdict = !s.fitsMemory ? 'too small for a 6 MB request' : !s.withinLatency ? 'over the latency budget' : s.memoryMb === choice.chosenMb ? 'cheapest within both' : 'within both';
    return `| ${name} | ${fmt(s.cpuShare, 3)} | ${fmt(s.addedBeforeAnswerMs, 1)} ms | ${fmt(s.billedMs, 0)} ms | $${fmt(s.lambdaUsd)} | $${fmt(s.storeAndKeysUsd)} | $${fmt(s.consumerUsd)} | **$${fmt(s.totalUsd)}** | ${verdict} |`;
  });
}

export const COST_TABLE_HEADER = [
  '| memory | vCPU share | added before the answer (at most) | billed per request | Lambda | DynamoDB, KMS, Secrets Manager | stream consumer (1M requests a month) | per million requests | |',
  '|---|--:|--:|--:|--:|--:|--:|--:|---|',
];

export function renderMemoryChoice(figures: InstanceFigures, choice: MemoryChoice): string {
  return [
    '# Lambda memory: the measured choice',
    '',
    `Written by \`npm run bench:memory\` (bench/lambda-memory.ts); store counts and prices from the committed run in results.json (commit ${choice.fromCommit.slice(0, 7)}).`,
    '',
    `The bundle's handler, one invocation at a time under a stand-in of Lambda's streaming runtime (DynamoDB Local and the fake upstream on this machine), ${figures.invocations} stored-key chat requests: median process CPU ${fmt(figures.cpuBeforeAnswerMs)} ms until the answer starts and ${fmt(figures.cpuTotalMs)} ms in all (row write included); wall time ${fmt(figures.wallBeforeAnswerMs)} ms and ${fmt(figures.wallTotalMs)} ms on a full core. Peak RSS ${fmt(figures.peakRssMb, 0)} MB; ${fmt(figures.peakRssLargeBodyMb, 0)} MB after requests with a body at the 6 MB limit.`,
    '',
    `Lambda gives CPU in proportion to memory (one vCPU at ${FULL_VCPU_MB} MB). The throttled time is computed from the measured CPU: c ms of CPU take c / share ms, store and provider waits are unchanged; that assumes no burst above the share, so the figures are upper bounds. A size qualifies when the peak RSS with a 6 MB body stays under ${RSS_HEADROOM * 100} % of it and the added time before the answer stays within ${ADDED_LATENCY_BUDGET_MS} ms (a cache hit, whose path costs the same CPU, must answer in about 80 ms). Cost at a ${UPSTREAM_SECONDS} s upstream; the stream consumer as the committed run prices it (RESULTS.md): at ${MONTHLY_REQUESTS.toLocaleString('en')} requests a month, ${rowsPerBatchAt(MONTHLY_REQUESTS).toFixed(1)} rows per batch, one ${CONSUMER.memoryMb} MB invocation and ${CONSUMER.rollupWritesPerCombination} rollup writes per batch; its worst case, a lone row per batch, is given there too.`,
    '',
    ...COST_TABLE_HEADER,
    ...costTableRows(choice),
    '',
    `Chosen: **${choice.chosenMb} MB**.`,
    '',
  ].join('\n');
}
