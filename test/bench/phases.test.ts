/**
 * The measuring phases interleave: in every round the store yardstick takes its turn beside the
 * contenders, and CPU is read per contender per round; streams are measured at c=16 as well, and
 * the Responses API stream beside the chat stream. Real load generator, real fake upstream, a real
 * bare-pipe process, the real local server.
 */
import { RESPONSES_CONTENDERS, buildContenders, type Contender } from '../../bench/contenders';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startLoadClient, type LoadClient } from '../../bench/load-client';
import { nonStreaming, streaming, throughputRamp } from '../../bench/phases';
import { startChild, startProxyServer, type Child } from '../../bench/processes';

let upstream: BenchUpstream;
let load: LoadClient;
let pipe: Child;
let contenders: Contender[];

beforeAll(async () => {
  upstream = await startBenchUpstream({ latencyMs: 0, chunks: 20, chunkIntervalMs: 0 });
  load = await startLoadClient(process.cwd());
  pipe = await startChild({ name: 'bare pipe', args: ['--import', 'tsx', 'bench/pipe-proxy.ts'], env: { TARGET: upstream.origin, PORT: '0' }, ready: /listening on (http:\/\/[\d.:]+)/ });
  const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
  contenders = buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy: placeholder as never, portkey: placeholder }).filter((c) => c.id === 'direct' || c.id === 'pipe');
});
afterAll(async () => {
  await pipe?.stop();
  await load?.stop();
  await upstream?.close();
});

test('the store yardstick is sampled in every round, before the contenders of that round, and CPU is read per round', async () => {
  const turns: string[] = [];
  const served = () => upstream.served;
  const yardstick = {
    perRound: 3,
    async sample(count: number, pauseMs?: number) {
      turns.push(`yardstick@${served()}`);
      expect(pauseMs).toBe(2);
      return { getItem: Array.from({ length: count }, () => 1), wave: Array.from({ length: count }, (_, i) => 2 + i), waveBesideRowWrite: Array.from({ length: count }, () => 7) };
    },
  };
  const rounds = 3;
  const result = await nonStreaming(load, contenders, { rounds, concurrency: 1, warmup: 2, count: 12, pauseMs: 2, yardstick, measureResources: { proxyPids: new Set() } });
  // Each round: the yardstick, then both contenders (2 warm-up + 4 measured each) reach the upstream.
  expect(turns).toEqual(Array.from({ length: rounds }, (_, round) => `yardstick@${round * 2 * 6}`));
  expect(result.yardstick!.wave.n).toBe(rounds * 3);
  expect(result.yardstick!.waveRoundP50s).toEqual([3, 3, 3]);
  expect(result.yardstick!.waveBesideRowWrite).toMatchObject({ n: rounds * 3, p50: 7 });
  for (const contender of contenders) expect(result.figures[contender.id]!.roundP50s).toHaveLength(rounds);
  expect(result.resources.pipe!.roundCpuMsPerRequest).toHaveLength(rounds);
  expect(result.resources.pipe!.requestsMeasured).toBe(rounds * 6);
});

test('the throughput ramp runs in rounds: each step is taken by every contender in turn, the order rotated per round', async () => {
  const taken: string[] = [];
  const watched = {
    latency: load.latency.bind(load),
    throughput: (job: Parameters<LoadClient['throughput']>[0]) => {
      taken.push(`${contenders.find((c) => c.spec(false).url === job.spec.url)!.id}@${job.steps[0]!.concurrency}`);
      return load.throughput(job);
    },
  } as LoadClient;
  const rounds = 2;
  const figures = await throughputRamp(watched, contenders, { rounds, steps: [4, 8].map((concurrency) => ({ concurrency, durationMs: 150 })) }, () => {});
  expect(taken).toEqual(['direct@4', 'pipe@4', 'direct@8', 'pipe@8', 'pipe@4', 'direct@4', 'pipe@8', 'direct@8']);
  for (const contender of contenders) {
    const figure = figures[contender.id]!;
    expect(figure.steps.map((step) => step.round)).toEqual([0, 0, 1, 1]);
    expect(figure.roundMaxRps).toHaveLength(rounds);
    expect(figure.maxRps).toBeGreaterThan(0);
  }
});

test('streams are measured at concurrency 16 with event lag per event', async () => {
  const figures = await streaming(load, upstream, contenders, { rounds: 2, concurrency: 16, warmup: 16, count: 32 });
  for (const contender of contenders) {
    expect(figures[contender.id]!.firstByte.n).toBe(32);
    expect(figures[contender.id]!.firstByte.errors).toBe(0);
    // 12 or 13 stamped events per stream (content, finish, usage when asked).
    expect(figures[contender.id]!.eventLag!.n).toBeGreaterThanOrEqual(32 * 12);
  }
});

describe('the Responses API stream phase', () => {
  let proxy: Awaited<ReturnType<typeof startProxyServer>>;
  let withProxy: Contender[];
  beforeAll(async () => {
    // The real local server on the run's DynamoDB Local, as `npm run bench` starts it.
    proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: process.env.DYNAMODB_ENDPOINT! });
    const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
    withProxy = buildContenders({ upstreamOrigin: upstream.origin, pipe: placeholder, proxy, portkey: placeholder }).filter((c) =>
      ['direct', 'stored', ...RESPONSES_CONTENDERS].includes(c.id),
    );
  });
  afterAll(async () => {
    await proxy?.stop();
  });

  test.each([1, 16])('at concurrency %i, the Responses stream is measured through the proxy beside the chat stream, every text delta timed', async (concurrency) => {
    const count = concurrency === 1 ? 6 : 32;
    const figures = await streaming(load, upstream, withProxy, { rounds: 2, concurrency, warmup: concurrency, count });
    for (const id of ['direct', 'stored', ...RESPONSES_CONTENDERS] as const) {
      expect(figures[id]!.firstByte.n).toBe(count);
      expect(figures[id]!.firstByte.errors + figures[id]!.firstByte.mismatches).toBe(0);
    }
    // Ten stamped text deltas per Responses stream, each with its lag.
    for (const id of RESPONSES_CONTENDERS) expect(figures[id]!.eventLag!.n).toBe(count * 10);
    // The phase's figures are what the budget and the README line are judged on.
    expect(figures.storedResponses!.eventLag!.p99).toEqual(expect.any(Number));
    expect(figures.stored!.eventLag!.p99).toEqual(expect.any(Number));
  });
});
