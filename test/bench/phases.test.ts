/**
 * The measuring phases interleave: in every round the store yardstick takes its turn beside the
 * contenders, and CPU is read per contender per round; streams are measured at c=16 as well.
 * Real load generator, real fake upstream, a real bare-pipe process.
 */
import { buildContenders, type Contender } from '../../bench/contenders';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startLoadClient, type LoadClient } from '../../bench/load-client';
import { nonStreaming, streaming } from '../../bench/phases';
import { startChild, type Child } from '../../bench/processes';

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
      return { getItem: Array.from({ length: count }, () => 1), wave: Array.from({ length: count }, (_, i) => 2 + i) };
    },
  };
  const rounds = 3;
  const result = await nonStreaming(load, contenders, { rounds, concurrency: 1, warmup: 2, count: 12, pauseMs: 2, yardstick, measureResources: { proxyPids: new Set() } });
  // Each round: the yardstick, then both contenders (2 warm-up + 4 measured each) reach the upstream.
  expect(turns).toEqual(Array.from({ length: rounds }, (_, round) => `yardstick@${round * 2 * 6}`));
  expect(result.yardstick!.wave.n).toBe(rounds * 3);
  expect(result.yardstick!.waveRoundP50s).toEqual([3, 3, 3]);
  for (const contender of contenders) expect(result.figures[contender.id]!.roundP50s).toHaveLength(rounds);
  expect(result.resources.pipe!.roundCpuMsPerRequest).toHaveLength(rounds);
  expect(result.resources.pipe!.requestsMeasured).toBe(rounds * 6);
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
