/**
 * The pinned phase: each contender alone on one CPU, everything else of the rig on the other,
 * interleaved, every affinity restored afterwards; skipped with a stated reason when taskset is
 * missing. Real load generator, real fake upstream, a real bare-pipe process and the real local
 * server on a DynamoDB Local of its own. Then how RESULTS.md and the budgets read its figures.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compareRuns } from '../../bench/compare';
import { buildContenders, type Contender, type ContenderId } from '../../bench/contenders';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startLoadClient, type LoadClient } from '../../bench/load-client';
import { figuresNotHeld } from '../../bench/figure-check';
import { finishResults } from '../../bench/outputs';
import { startDynamoDbLocal } from '../../lambda/local/dynamodb-local';
import { allowedCpus, parseCpuList, pinnedPhase, pinningPlan, type PinnedContender, type PinnedFigures } from '../../bench/pinned';
import { findDynamoDbLocalPid } from '../../bench/process-stats';
import { startChild, startProxyServer, type Child, type ProxyInstance } from '../../bench/processes';
import { renderReadmeSection } from '../../bench/readme';
import { renderResults } from '../../bench/report';
import type { Results } from '../../bench/results';
import { scaledRamp } from './scaled-ramp';

const plan = pinningPlan();
const available = 'cpus' in plan;

/** The distinct allowed-CPU lists of a process's threads: pinning must reach the pool and helper threads, not only the main one. */
const threadLists = (pid: number) => [...new Set(readdirSync(`/proc/${pid}/task`).map((tid) => allowedCpus(Number(tid))))].sort();

test('parses affinity lists as the kernel and taskset print them', () => {
  expect(parseCpuList('0,1')).toEqual([0, 1]);
  expect(parseCpuList('0-3')).toEqual([0, 1, 2, 3]);
  expect(parseCpuList('1,4-5\n')).toEqual([1, 4, 5]);
});

(available ? describe : describe.skip)('the pinned phase against real processes', () => {
  let upstream: BenchUpstream;
  let load: LoadClient;
  let pipe: Child;
  let proxy: ProxyInstance;
  let contenders: Contender[];
  let storePid: number | undefined;
  let store: Awaited<ReturnType<typeof startDynamoDbLocal>>;

  beforeAll(async () => {
    upstream = await startBenchUpstream({ latencyMs: 0, chunks: 20, chunkIntervalMs: 0 });
    load = await startLoadClient(process.cwd());
    pipe = await startChild({ name: 'bare pipe', args: ['--import', 'tsx', 'bench/pipe-proxy.ts'], env: { TARGET: upstream.origin, PORT: '0' }, ready: /listening on (http:\/\/[\d.:]+)/ });
    // A DynamoDB Local of its own, as the bench starts one: pinning the run's shared store would slow other test files.
    store = await startDynamoDbLocal();
    proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: store.endpoint });
    storePid = findDynamoDbLocalPid(Number(new URL(store.endpoint).port));
    const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
    contenders = buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy, portkey: placeholder }).filter((c) => ['direct', 'pipe', 'stored', 'passThrough'].includes(c.id));
  });
  afterAll(async () => {
    await proxy?.stop();
    await store?.stop();
    await pipe?.stop();
    await load?.stop();
    await upstream?.close();
  });

  test('each contender runs alone on one CPU while the store, the load generator and the upstream run on the other; every affinity is restored', async () => {
    const { cpus } = plan as Exclude<typeof plan, { skipped: string }>;
    expect(storePid).toEqual(expect.any(Number));
    const watched = { pipe: pipe.pid, proxy: proxy.pid, load: load.pid, orchestrator: process.pid, store: storePid! };
    const before = Object.fromEntries(Object.entries(watched).map(([name, pid]) => [name, threadLists(pid)]));
    // Sampled while the phase awaits its load: every state a contender's requests met.
    const seen: Record<string, Set<string>> = Object.fromEntries(Object.keys(watched).map((name) => [name, new Set<string>()]));
    const splitThreads: string[] = [];
    const sampler = setInterval(() => {
      for (const [name, pid] of Object.entries(watched)) {
        const lists = threadLists(pid);
        if (lists.length > 1) splitThreads.push(`${name}: ${lists.join(' | ')}`);
        for (const list of lists) seen[name]!.add(list);
      }
    }, 5);
    let figures: PinnedFigures;
    try {
      figures = await pinnedPhase(
        load,
        contenders,
        { otherPids: [process.pid, load.pid, pipe.pid, proxy.pid], storePid, storeUsers: new Set([proxy.pid]) },
        { rounds: 2, concurrency: 16, warmup: 16, count: 64, steps: [{ concurrency: 8, durationMs: 300 }], rampRounds: 2 },
      );
    } finally {
      clearInterval(sampler);
    }

    expect(figures.skipped).toBeUndefined();
    expect(figures.cpus).toEqual(cpus);
    const own = String(cpus.contender);
    const rest = String(cpus.rest);
    // The contenders had the CPU to themselves in their turns and the other one in everyone else's.
    expect([...seen.pipe!].sort()).toEqual([own, rest].sort());
    expect([...seen.proxy!].sort()).toEqual([own, rest].sort());
    for (const name of ['load', 'orchestrator', 'store']) expect([...seen[name]!]).toEqual([rest]);
    expect(splitThreads).toEqual([]);
    // Later phases meet the machine as it was.
    for (const [name, pid] of Object.entries(watched)) expect([name, threadLists(pid)]).toEqual([name, before[name]]);

    for (const id of ['direct', 'pipe', 'stored', 'passThrough'] as ContenderId[]) {
      const c = figures.contenders[id]!;
      expect(c.c16.n).toBe(64);
      expect(c.c16.errors + c.c16.mismatches).toBe(0);
      expect(c.c16.roundP50s).toHaveLength(2);
      // The one step, taken in each of the two rounds.
      expect(c.throughput.steps.map((step) => [step.round, step.concurrency])).toEqual([[0, 8], [1, 8]]);
      expect(c.throughput.roundMaxRps).toHaveLength(2);
      expect(c.throughput.maxRps).toBeGreaterThan(0);
      expect(c.throughput.atConcurrency).toBe(8);
      for (const share of [c.busyC16.restCpu, c.busyAtMax!.restCpu]) {
        expect(share).toBeGreaterThan(0);
        expect(share).toBeLessThanOrEqual(1);
      }
    }
    expect(figures.contenders.direct!.cpuMsPerRequest).toBeUndefined();
    for (const id of ['pipe', 'stored'] as const) {
      expect(figures.contenders[id]!.cpuMsPerRequest).toBeGreaterThanOrEqual(0);
      expect(figures.contenders[id]!.busyAtMax!.contenderCpu).toBeGreaterThan(0);
    }
    // The store's CPU is charged to the contenders that call it, and only to them.
    expect(figures.contenders.stored!.storeCpuMsPerRequestAtMax).toBeGreaterThan(0);
    expect(figures.contenders.pipe!.storeCpuMsPerRequestAtMax).toBeUndefined();
  });
});

test("a store whose process cannot be found (so it cannot be kept off the contender's CPU) skips the phase with that reason", async () => {
  const load = { latency: () => Promise.reject(new Error('must not run')), throughput: () => Promise.reject(new Error('must not run')) } as unknown as LoadClient;
  const figures = await pinnedPhase(load, [], { otherPids: [process.pid], storeUsers: new Set([process.pid]) }, { rounds: 1, concurrency: 16, warmup: 0, count: 1, steps: [], rampRounds: 1 });
  expect(figures).toEqual({ skipped: "DynamoDB Local's java process was not found, so it could not be kept off the contender's CPU", contenders: {} });
});

test('without taskset the phase is skipped with its reason, and no process is touched', async () => {
  const before = allowedCpus(process.pid);
  const load = { latency: () => Promise.reject(new Error('must not run')), throughput: () => Promise.reject(new Error('must not run')) } as unknown as LoadClient;
  const figures = await pinnedPhase(load, [], { otherPids: [process.pid], storeUsers: new Set() }, { rounds: 1, concurrency: 16, warmup: 0, count: 1, steps: [], rampRounds: 1 }, 'taskset-not-installed');
  expect(figures.contenders).toEqual({});
  expect(figures.skipped).toMatch(/`taskset-not-installed` \(util-linux\) is not available/);
  expect(allowedCpus(process.pid)).toBe(before);
});

describe('how a run reads the pinned figures', () => {
  const committed = JSON.parse(readFileSync(join(__dirname, '..', '..', 'bench', 'results.json'), 'utf8')) as Results;
  const { budgets: _budgets, headline: _headline, ...measured } = committed;
  const latency = (p50: number, p99: number) => ({ n: 100, p50, p95: p99, p99, max: p99, mean: p50, errors: 0, mismatches: 0, roundP50s: [p50] });
  const contender = (p99: number, rps: number, busy: [number, number], cpu?: number, store?: number, outside?: number): PinnedContender => ({
    c16: latency(p99 / 2, p99),
    ...(cpu !== undefined ? { cpuMsPerRequest: cpu, cpuMsPerRequestAtMax: cpu } : {}),
    busyC16: { contenderCpu: busy[0], restCpu: busy[1], contenderCpuByRig: busy[0] - (outside ?? 0), restCpuByRig: busy[1] - (outside ?? 0) },
    throughput: { steps: [{ concurrency: 64, durationMs: 1500, completed: rps * 1.5, errors: 0, rps, p50: 1, p99: 2, round: 0 }], maxRps: rps, atConcurrency: 64, roundMaxRps: [rps] },
    busyAtMax: { contenderCpu: busy[0], restCpu: busy[1], contenderCpuByRig: busy[0] - (outside ?? 0), restCpuByRig: busy[1] - (outside ?? 0) },
    ...(store !== undefined ? { storeCpuMsPerRequestAtMax: store } : {}),
  });
  /** The committed run with shared-core figures that miss both budgets, plus the given pinned phase. */
  const run = (pinned: PinnedFigures | undefined) => {
    const copy = JSON.parse(JSON.stringify(measured)) as typeof measured;
    copy.latency.c16.stored!.p99 = copy.latency.c16.portkey!.p99 + 40;
    copy.throughput.stored = scaledRamp(copy.throughput.portkey!, 0.5);
    return finishResults({ ...copy, pinned });
  };
  const budget = (r: Results, name: string) => r.budgets.find((b) => b.name.startsWith(name))!;

  test('the store saturating its CPU while the proxy is below Portkey: the store is named as the limit, and the per-core ceilings decide the design', () => {
    const pinned: PinnedFigures = {
      cpus: { contender: 0, rest: 1 },
      contenders: {
        direct: contender(1, 9000, [0.02, 0.6]),
        pipe: contender(5, 4000, [0.7, 0.95], 0.25),
        stored: contender(30, 400, [0.5, 0.99], 1.25, 2.5),
        passThrough: contender(28, 420, [0.5, 0.99], 1.2, 2.4),
        portkey: contender(40, 700, [0.98, 0.6], 1.6),
      },
    };
    const r = run(pinned);
    const throughput = budget(r, "Throughput at 0 errors ≥ Portkey's");
    expect(throughput.met).toBe(false);
    expect(throughput.why).toContain("pinned, the proxy reaches 400 req/s against Portkey's 700");
    expect(throughput.why).toContain('the limit was the CPU holding DynamoDB Local, the load and the upstream (99 % busy');
    // 1000 / 1.25 ms = 800 req/s on its own core against Portkey's 625: a remote store meets it.
    expect(throughput.why).toContain('allows ~800 req/s per core');
    expect(throughput.why).toContain('a remote store is the design that meets it');
    const p99 = budget(r, 'Added p99, c=16, stored key');
    expect(p99.met).toBe(false);
    expect(p99.why).toContain("it adds 29.00 ms p99 against Portkey's 39.00 ms: below Portkey's once the store does not share its core");

    // The README quotes the pinned figures from the headline, every number held by the run.
    const section = renderReadmeSection(r);
    expect(section).toContain("added p99 at concurrency 16 29.00 ms with a stored key against Portkey's 39.00 ms; 400 requests/s against Portkey's 700");
    expect(section).toContain('about 800 requests/s through this proxy and 625 through Portkey');
    expect(figuresNotHeld(section, r)).toEqual([]);

    const tables = renderResults(r);
    expect(tables).toContain('## Pinned: each contender alone on one CPU');
    expect(tables).toContain('| this proxy, stored key | 15.00 / 30.00 | +14.50 / +29.00 |');
    expect(tables).toContain('| 1.250 | 50 % (50 %) / 99 % (99 %) | 400 at c=64 |');
    expect(throughput.why).not.toContain('outside load');
  });

  test("the proxy's own CPU as the limit, at a higher CPU per request than Portkey's: fewer store calls is the design named", () => {
    const pinned: PinnedFigures = {
      cpus: { contender: 0, rest: 1 },
      contenders: {
        direct: contender(1, 9000, [0.02, 0.6]),
        stored: contender(60, 400, [0.99, 0.7], 2.5, 2),
        portkey: contender(40, 700, [0.98, 0.6], 1.4),
      },
    };
    const r = run(pinned);
    const throughput = budget(r, "Throughput at 0 errors ≥ Portkey's");
    expect(throughput.why).toContain("the proxy's own CPU was the limit (99 % busy, the other 70 %)");
    expect(throughput.why).toContain('fewer store calls per request is the design that would meet it');
    expect(budget(r, 'Added p99, c=16, stored key').why).toContain('still above with its CPU to itself (99 % busy, the other 70 %)');
  });

  test('busy CPUs the rig used only in part: the reasons say the figures were taken under outside load', () => {
    const r = run({
      cpus: { contender: 0, rest: 1 },
      contenders: { direct: contender(1, 9000, [0.5, 1], undefined, undefined, 0.4), stored: contender(60, 100, [1, 1], 2.5, 2, 0.6), portkey: contender(40, 200, [1, 1], 1.4, undefined, 0.6) },
    });
    const throughput = budget(r, "Throughput at 0 errors ≥ Portkey's");
    expect(throughput.why).toContain('both CPUs were busy');
    expect(throughput.why).toContain("other work on the machine took 60 % of the contender's CPU and 60 % of the other, so these pinned figures were taken under outside load");
    expect(budget(r, 'Added p99, c=16, stored key').why).toContain('taken under outside load');
    expect(renderResults(r)).toContain('| 100 % (40 %) / 100 % (40 %) |');
  });

  test('a run without the phase, or with it skipped, says so in RESULTS.md and in the reasons', () => {
    const without = run(undefined);
    expect(renderResults(without)).toContain('Not measured in this run: it predates the pinned phase.');
    expect(without.headline.pinned).toBeNull();
    expect(renderReadmeSection(without)).toContain("- **With the store off the proxy's CPU:** not measured in this run (it predates that phase of the benchmark).");
    expect(budget(without, "Throughput at 0 errors ≥ Portkey's").why).toContain('no pinned measurement in this run');
    const skipped = run({ skipped: '`taskset` (util-linux) is not available (ENOENT)', contenders: {} });
    expect(renderResults(skipped)).toContain('Skipped in this run: `taskset` (util-linux) is not available (ENOENT).');
    expect(renderReadmeSection(skipped)).toContain("- **With the store off the proxy's CPU:** not measured in this run (`taskset` (util-linux) is not available (ENOENT)).");
    expect(budget(skipped, 'Added p99, c=16, stored key').why).toContain('the pinned phase was skipped (`taskset` (util-linux) is not available (ENOENT))');
  });

  test('a rerun is compared with the pinned figures of the run before it, when both have them', () => {
    const pinned = (storedRps: number): PinnedFigures => ({
      cpus: { contender: 0, rest: 1 },
      contenders: { direct: contender(1, 9000, [0.02, 0.6]), stored: contender(30, storedRps, [0.99, 0.7], 1.25, 2), portkey: contender(40, 700, [0.98, 0.6], 1.4) },
    });
    const figure = (rows: ReturnType<typeof compareRuns>, name: string) => rows.find((row) => row.figure === name);
    const ratio = 'pinned throughput, stored key / Portkey (same run)';
    expect(figure(compareRuns(run(undefined), run(pinned(400))), ratio)).toBeUndefined();
    expect(figure(compareRuns(run(pinned(400)), run(pinned(440))), ratio)!.within).toBe(true);
    expect(figure(compareRuns(run(pinned(400)), run(pinned(200))), ratio)!.within).toBe(false);
  });

  test("throughput at or above Portkey's meets the budget", () => {
    const copy = JSON.parse(JSON.stringify(measured)) as typeof measured;
    copy.throughput.stored = scaledRamp(copy.throughput.portkey!, 1);
    expect(budget(finishResults(copy), "Throughput at 0 errors ≥ Portkey's").met).toBe(true);
  });
});
