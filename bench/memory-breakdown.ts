/**
 * `npm run bench:rss`: where the local server's resident memory goes, at idle and under the
 * benchmark's c=16 load. Starts the fake upstream, DynamoDB Local, the bare pipe proxy (the
 * floor: Node itself) and dist/local/server.mjs exactly as `npm start` runs it, drives them
 * from the load generator process as the bench's phases do (c=1, then c=16 rounds of the stored-key,
 * pass-through and cache-hit modes interleaved with the pipe), and prints, per checkpoint, the kernel's figures (VmRSS,
 * anonymous vs file-backed pages) beside V8's (heap spaces, external memory, GC counts) read
 * inside the server by a bench-only preload. CPU per request comes from /proc as in the bench.
 * - RSS_NODE_FLAGS="--max-semi-space-size=4": Node flags for the server instead of `npm start`'s (compare
 *   settings; RSS_NODE_FLAGS= with nothing runs it on Node's defaults).
 * - RSS_REQUESTS=4000: requests per mode at c=16 (default 2000, as in the bench's c=16 phase).
 * - --expose-gc among RSS_NODE_FLAGS adds a checkpoint after a full GC (the live set).
 * - RSS_ALLOCATIONS=1 samples every allocation during the c=16 rounds (collected ones included; run it on a
 *   BUILD_MINIFY=0 build for names) and prints the top sites; the profile is kept in bench/out/ for DevTools.
 * - RSS_SNAPSHOT=1 writes a heap snapshot after the load to bench/out/ (for DevTools' Memory tab).
 * Nothing is written to the committed outputs.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContenders, primeCache, type Contender } from './contenders';
import { startLoadClient, type LoadClient } from './load-client';
import { startRig } from './rig';
import { cpuMs, sampleRss } from './process-stats';
import { LOCAL_SERVER_NODE_FLAGS, ROOT, SERVER_BUNDLE, startPipeProxy, startProxyServer, type Child } from './processes';

/** What the preload reports from inside a process on SIGUSR2. */
interface Inside {
  memory: NodeJS.MemoryUsage;
  spaces: Record<string, { size: number; used: number }>;
  gc: Record<string, { count: number; ms: number }>;
  flags: string[];
}

/**
 * Loaded with --import before the server: on SIGUSR2 it writes V8's view of the process to
 * RSS_REPORT_FILE. Bench-only; the project itself has no such hook.
 */
const PRELOAD =
  'data:text/javascript,' +
  encodeURIComponent(`import v8 from 'node:v8';
import { readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak' };
const gc = {};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = kinds[entry.detail?.kind] ?? String(entry.detail?.kind);
    const slot = (gc[kind] ??= { count: 0, ms: 0 });
    slot.count++;
    slot.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });
let profiler;
if (process.env.RSS_ALLOCATIONS) {
  const { Session } = await import('node:inspector');
  profiler = new Session();
  profiler.connect();
}
const post = (method, params) => new Promise((resolve, reject) => profiler.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
process.on('SIGUSR2', async () => {
  let command = '';
  try { command = readFileSync(process.env.RSS_REPORT_FILE + '.command', 'utf8'); } catch {}
  if (command.startsWith('gc') && globalThis.gc) globalThis.gc();
  if (command.startsWith('snapshot')) v8.writeHeapSnapshot(command.slice('snapshot '.length));
  if (command.startsWith('sample') && profiler) await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  if (command.startsWith('profile ') && profiler) writeFileSync(command.slice('profile '.length), JSON.stringify((await post('HeapProfiler.stopSampling', {})).profile));
  const spaces = {};
  for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = { size: s.space_size, used: s.space_used_size };
  writeFileSync(process.env.RSS_REPORT_FILE, JSON.stringify({ memory: process.memoryUsage(), spaces, gc, flags: process.execArgv }));
});`);

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function kernel(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

async function inside(pid: number, file: string, command = ''): Promise<Inside> {
  rmSync(file, { force: true });
  writeFileSync(`${file}.command`, command);
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 1000; i++) {
    await sleep(20);
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Inside;
    } catch {
      // Not written yet (or half written).
    }
  }
  throw new Error('the server did not report its memory');
}

interface Checkpoint {
  label: string;
  rss: number;
  anon: number;
  file: number;
  inside: Inside;
}

function row(c: Checkpoint): string {
  const m = c.inside.memory;
  const s = c.inside.spaces;
  const space = (name: string) => (s[name] ? `${(s[name].size / MB).toFixed(1)}` : '–');
  return [
    c.label.padEnd(28),
    c.rss.toFixed(1).padStart(6),
    c.anon.toFixed(1).padStart(6),
    c.file.toFixed(1).padStart(6),
    (m.heapTotal / MB).toFixed(1).padStart(7),
    (m.heapUsed / MB).toFixed(1).padStart(7),
    space('new_space').padStart(6),
    space('old_space').padStart(6),
    space('code_space').padStart(6),
    space('large_object_space').padStart(6),
    (m.external / MB).toFixed(1).padStart(6),
    (m.arrayBuffers / MB).toFixed(1).padStart(6),
  ].join(' ');
}

const HEADER = [
  'checkpoint'.padEnd(28),
  'VmRSS'.padStart(6),
  'anon'.padStart(6),
  'file'.padStart(6),
  'heapTot'.padStart(7),
  'heapUse'.padStart(7),
  'new'.padStart(6),
  'old'.padStart(6),
  'code'.padStart(6),
  'large'.padStart(6),
  'extern'.padStart(6),
  'arrBuf'.padStart(6),
].join(' ');

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}
interface SamplingProfile {
  head: ProfileNode;
}

/** Bytes allocated per request by function (self), from V8's sampling heap profiler with collected objects kept. */
function printAllocations(profile: SamplingProfile, requests: number): void {
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode) => {
    const f = node.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  process.stdout.write(`\nallocated during c=16: ${(total / requests / 1024).toFixed(1)} KB per request (sampled); top sites, KB per request:\n`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30)) process.stdout.write(`  ${(bytes / requests / 1024).toFixed(2).padStart(7)}  ${site}\n`);
}


async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-rss-'));
  const cleanups: Array<() => Promise<unknown>> = [async () => rmSync(work, { recursive: true, force: true })];
  const flags = process.env.RSS_NODE_FLAGS === undefined ? LOCAL_SERVER_NODE_FLAGS : process.env.RSS_NODE_FLAGS.split(' ').filter(Boolean);
  const perMode = Number(process.env.RSS_REQUESTS ?? 2000);
  try {
    const reportFile = join(work, 'report.json');
    const { pipeScript, upstream, dynamo } = await startRig(work, cleanups);
    process.env.RSS_REPORT_FILE = reportFile;
    const proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: dynamo.endpoint, entry: SERVER_BUNDLE, nodeFlags: flags, nodeArgs: ['--import', PRELOAD] });
    cleanups.push(() => proxy.stop());
    const pipe: Child = await startPipeProxy(pipeScript, upstream.origin);
    cleanups.push(() => pipe.stop());
    const load: LoadClient = await startLoadClient(ROOT);
    cleanups.push(() => load.stop());
    // The bench's contenders; the pipe stands in for Portkey, which is not started here.
    const contenders = buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy, portkey: pipe });
    const pick = (id: string) => contenders.find((c) => c.id === id)!;
    const modes: Contender[] = [pick('stored'), pick('passThrough'), pick('cacheHit')];
    await primeCache(pick('cacheHit'));

    const checkpoints: Checkpoint[] = [];
    const take = async (label: string, rss?: number) => {
      const k = kernel(proxy.pid);
      checkpoints.push({ label, ...k, rss: rss ?? k.rss, inside: await inside(proxy.pid, reportFile) });
    };
    process.stdout.write(`server flags: ${flags.join(' ') || "(none: Node's defaults)"}${process.env.RSS_NODE_FLAGS === undefined ? " (npm start's)" : ''}\n`);
    await sleep(2000);
    await take('started, no request yet');
    for (const mode of modes) await load.latency({ spec: mode.spec(false), concurrency: 1, warmup: 20, count: 500 });
    await sleep(1000);
    await take('after 1500 at c=1');

    const cpuBefore = cpuMs(proxy.pid);
    const gcBefore = (await inside(proxy.pid, reportFile)).gc;
    const allocations = process.env.RSS_ALLOCATIONS ? join(ROOT, 'bench', 'out', 'server-c16.heapprofile') : undefined;
    if (allocations) mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true });
    if (allocations) await inside(proxy.pid, reportFile, 'sample');
    const sampler = sampleRss(proxy.pid);
    const pipeSampler = sampleRss(pipe.pid);
    const rounds = 5;
    let requests = 0;
    let mid: Checkpoint | undefined;
    for (let round = 0; round < rounds; round++) {
      for (const mode of modes) {
        const job = load.latency({ spec: mode.spec(false), concurrency: 16, warmup: 32, count: perMode / rounds });
        if (round === 2 && mode === modes[0]) {
          await sleep(300);
          const k = kernel(proxy.pid);
          mid = { label: 'during c=16 (round 3)', ...k, inside: await inside(proxy.pid, reportFile) };
        }
        const result = await job;
        requests += 32 + result.totalMs.length;
      }
      await load.latency({ spec: pick('pipe').spec(false), concurrency: 16, warmup: 0, count: 200 });
    }
    const cpu = cpuMs(proxy.pid) - cpuBefore;
    const maxRss = sampler.stop();
    const pipeMax = pipeSampler.stop();
    checkpoints.push(mid!);
    if (allocations) await inside(proxy.pid, reportFile, `profile ${allocations}`);
    await take('after c=16 (highest RSS)', maxRss);
    const gcAfter = (await inside(proxy.pid, reportFile)).gc;
    await sleep(5000);
    await take('5 s after c=16');
    if (flags.includes('--expose-gc')) {
      const k = kernel(proxy.pid);
      checkpoints.push({ label: 'after a full GC (live set)', ...k, inside: await inside(proxy.pid, reportFile, 'gc') });
    }
    if (process.env.RSS_SNAPSHOT) {
      const out = join(ROOT, 'bench', 'out');
      mkdirSync(out, { recursive: true });
      await inside(proxy.pid, reportFile, `snapshot ${join(out, 'server-after-c16.heapsnapshot')}`);
      process.stdout.write(`heap snapshot: bench/out/server-after-c16.heapsnapshot\n`);
    }

    process.stdout.write(`\nMB (RSS = kernel's VmRSS: anon = private heap/malloc pages, file = mapped node binary and libraries)\n${HEADER}\n`);
    for (const c of checkpoints) process.stdout.write(row(c) + '\n');
    process.stdout.write(`\nbare pipe (Node alone, same load): ${kernel(pipe.pid).rss.toFixed(1)} MB now, ${pipeMax.toFixed(1)} MB highest\n`);
    process.stdout.write(`server during c=16: ${requests} requests, CPU ${(cpu / requests).toFixed(3)} ms/request (10 ms ticks)\n`);
    for (const kind of Object.keys(gcAfter)) {
      const count = gcAfter[kind]!.count - (gcBefore[kind]?.count ?? 0);
      const ms = gcAfter[kind]!.ms - (gcBefore[kind]?.ms ?? 0);
      process.stdout.write(`  GC ${kind.padEnd(12)} ${String(count).padStart(6)} runs, pauses ${ms.toFixed(1).padStart(7)} ms of wall time (${((ms / requests) * 1000).toFixed(1)} µs/request)\n`);
    }
    if (allocations) printAllocations(JSON.parse(readFileSync(allocations, 'utf8')) as SamplingProfile, requests);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

main().catch((error) => {
  process.stderr.write(`bench:rss failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
