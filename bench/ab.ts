/**
 * `npm run bench:ab`: a paired comparison of the local server's CPU per stored-key request, before and
 * after a change. Every round starts both builds afresh (one process's JIT decisions would otherwise
 * tilt all rounds alike), warms them up, and lets them take short turns (the order flipping each turn)
 * against the same fake upstream and DynamoDB Local, at c=1 paced (how a Lambda instance serves) and
 * at c=16; the bare pipe takes its turns too. Each round's ratio after/before is printed: on a shared
 * machine the ratios of the same round are comparable where absolute figures are not.
 *
 *   npm run bench:ab -- [--before <git ref | bundle.mjs>] [--after <git ref | bundle.mjs | .>]
 *                       [--before-flags "<node flags>"] [--after-flags "<node flags>"] [--rounds 3]
 *                       [--paced 300] [--c16 1000] [--warm 2000] [--turns 5] [--profile]
 *
 * - `--before` defaults to HEAD, `--after` to `.` (the working tree's lambda/ as it is now). A git ref
 *   is built from its own lambda/ sources (with this checkout's node_modules); a `.mjs` is used as is.
 * - Node flags default to `npm start`'s (package.json); `--before-flags ""` runs on Node's defaults.
 *   The same build with two flag sets compares settings.
 * - `--warm`: requests each build serves at c=16, unmeasured, at the start of a round (V8 optimises
 *   code that runs once per request only after thousands of requests).
 * - `--turns`: how many times the sides alternate within a round, each serving its share.
 * - `--profile` also runs the after build unminified under `--cpu-prof` at c=1 paced and prints the self
 *   time by package and by function (bench/profile.ts).
 * Nothing is written to the committed outputs; timings are never asserted anywhere.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildContenders } from './contenders';
import { startLoadClient, type LoadClient } from './load-client';
import type { RequestSpec } from './load-protocol';
import { startRig } from './rig';
import { cpuMs, memoryMb } from './process-stats';
import { LOCAL_SERVER_NODE_FLAGS, ROOT, startPipeProxy, startProxyServer, type Child, type ProxyInstance } from './processes';
import { buildReadableServer, buildServerBundle, summariseProfile } from './profile';

export interface AbSide {
  /** A git ref, a path to a built server bundle (`.mjs`), or `.` for the working tree. */
  source: string;
  nodeFlags: string[];
}

export interface AbOptions {
  before: AbSide;
  after: AbSide;
  rounds: number;
  /** Requests per side per round at c=1 with a pause after each answer. */
  paced: { count: number; warmup: number; pauseMs: number };
  /** Requests per side per round at c=16. */
  c16: { count: number; warmup: number };
  /**
   * Requests each side serves at c=16 before the first round, unmeasured: V8 optimises a function
   * called once per request only after thousands of calls, and a side still warming up would
   * make the rounds measure the JIT instead of the code.
   */
  warm: number;
  /** Turns per round: the sides alternate this many times within a round, each serving its share. */
  turns: number;
  profile: boolean;
}

const splitFlags = (text: string) => text.trim().split(/\s+/).filter(Boolean);

export function parseAbArgs(argv: string[], defaultFlags: string[] = LOCAL_SERVER_NODE_FLAGS): AbOptions {
  const options: AbOptions = {
    before: { source: 'HEAD', nodeFlags: defaultFlags },
    after: { source: '.', nodeFlags: defaultFlags },
    rounds: 3,
    paced: { count: 300, warmup: 20, pauseMs: 20 },
    c16: { count: 1000, warmup: 200 },
    warm: 2000,
    turns: 5,
    profile: false,
  };
  const count = (name: string, value: string | undefined) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} wants a positive whole number, got ${value}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!;
    if (name === '--profile') {
      options.profile = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`${name} wants a value`);
    if (name === '--before') options.before.source = value;
    else if (name === '--after') options.after.source = value;
    else if (name === '--before-flags') options.before.nodeFlags = splitFlags(value);
    else if (name === '--after-flags') options.after.nodeFlags = splitFlags(value);
    else if (name === '--rounds') options.rounds = count(name, value);
    else if (name === '--paced') options.paced.count = count(name, value);
    else if (name === '--c16') options.c16.count = count(name, value);
    else if (name === '--turns') options.turns = count(name, value);
    else if (name === '--warm') options.warm = value === '0' ? 0 : count(name, value);
    else throw new Error(`unknown option ${name}`);
  }
  return options;
}

/** CPU per request (ms) of each process in one round, at one level. */
export interface RoundCpu {
  before: number;
  after: number;
  pipe: number;
}

export interface LevelSummary {
  /** after / before, per round. */
  ratios: number[];
  /** The median of the per-round ratios (what to quote), and their geometric mean. */
  medianRatio: number;
  geometricMeanRatio: number;
  /** Each side over the bare pipe of the same round, per round. */
  beforeOverPipe: number[];
  afterOverPipe: number[];
}

export function median(values: number[]): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summariseLevel(rounds: RoundCpu[]): LevelSummary {
  const ratios = rounds.map((r) => r.after / r.before);
  const geometricMeanRatio = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
  return {
    ratios,
    medianRatio: median(ratios),
    geometricMeanRatio,
    beforeOverPipe: rounds.map((r) => r.before / r.pipe),
    afterOverPipe: rounds.map((r) => r.after / r.pipe),
  };
}

/** Which side goes first in a turn: before in even ones, after in odd ones (so neither always warms the store for the other). */
export function turnOrder(round: number): Array<'before' | 'after' | 'pipe'> {
  return round % 2 === 0 ? ['pipe', 'before', 'after'] : ['pipe', 'after', 'before'];
}

/** The server bundle for one side: built from a git ref's lambda/, from the working tree, or a given file. */
async function bundleFor(source: string, work: string, label: string): Promise<string> {
  if (source.endsWith('.mjs')) return resolve(source);
  const outdir = mkdtempSync(join(work, `${label}-`));
  if (source === '.') return buildServerBundle(ROOT, { minify: true, outdir });
  const sha = execFileSync('git', ['rev-parse', '--verify', `${source}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  // Inside the checkout, so that the ref's sources resolve this checkout's node_modules.
  const tree = join(ROOT, 'bench', 'out', 'ab', sha);
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${sha} lambda | tar -x -C "${tree}"`], { cwd: ROOT });
  try {
    return await buildServerBundle(tree, { minify: true, outdir });
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

const settle = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** CPU (ms) of one process over one load job (warm-up included, as the bench counts it). */
async function cpuOf(load: LoadClient, pid: number, spec: RequestSpec, job: { concurrency: number; count: number; warmup: number; pauseMs?: number }): Promise<number> {
  const before = cpuMs(pid);
  const result = await load.latency({ spec, ...job });
  if (result.errors || result.mismatches) throw new Error(`${spec.url}: ${result.errors} errors, ${result.mismatches} mismatches: ${result.firstError ?? ''}`);
  // Rows are written just after each answer: let the last ones land before reading the counter.
  await settle(250);
  return cpuMs(pid) - before;
}

const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

export function formatLevel(name: string, rounds: RoundCpu[]): string {
  const s = summariseLevel(rounds);
  const lines = [`${name}: CPU ms per stored-key request (bare pipe beside it)`];
  rounds.forEach((r, i) => {
    lines.push(`  round ${i + 1}: before ${fmt(r.before)}  after ${fmt(r.after)}  pipe ${fmt(r.pipe)}  after/before ${fmt(s.ratios[i]!)}  (before ${fmt(s.beforeOverPipe[i]!, 2)}× pipe, after ${fmt(s.afterOverPipe[i]!, 2)}× pipe)`);
  });
  lines.push(`  after/before: median ${fmt(s.medianRatio)}, geometric mean ${fmt(s.geometricMeanRatio)}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseAbArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'bench-ab-'));
  const cleanups: Array<() => Promise<unknown>> = [async () => rmSync(work, { recursive: true, force: true })];
  try {
    const [beforeBundle, afterBundle] = await Promise.all([bundleFor(options.before.source, work, 'before'), bundleFor(options.after.source, work, 'after')]);
    const { pipeScript, upstream, dynamo } = await startRig(work, cleanups);
    const start = (entry: string, side: AbSide, name: string) =>
      startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: dynamo.endpoint, entry, nodeFlags: side.nodeFlags, name });
    const pipe = await startPipeProxy(pipeScript, upstream.origin);
    cleanups.push(() => pipe.stop());
    const load = await startLoadClient(ROOT);
    cleanups.push(() => load.stop());
    const contendersOf = (proxy: ProxyInstance) => buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy, portkey: pipe });
    const pipeSide = { pid: pipe.pid, spec: contendersOf(pipe as ProxyInstance).find((c) => c.id === 'pipe')!.spec(false) };
    process.stdout.write(
      `before: ${options.before.source} [${options.before.nodeFlags.join(' ')}]\nafter:  ${options.after.source} [${options.after.nodeFlags.join(' ')}]\n` +
        `load average at start ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`,
    );
    const paced: RoundCpu[] = [];
    const c16: RoundCpu[] = [];
    const rssMax = { before: 0, after: 0 };
    for (let round = 0; round < options.rounds; round++) {
      // Fresh processes every round: one process's JIT decisions would otherwise tilt every round alike.
      const proxies: Partial<Record<'before' | 'after', ProxyInstance>> = {};
      for (const side of turnOrder(round)) {
        if (side === 'pipe') continue;
        proxies[side] = await start(side === 'before' ? beforeBundle : afterBundle, options[side], side);
      }
      try {
        const sides = {
          pipe: pipeSide,
          before: { pid: proxies.before!.pid, spec: contendersOf(proxies.before!).find((c) => c.id === 'stored')!.spec(false) },
          after: { pid: proxies.after!.pid, spec: contendersOf(proxies.after!).find((c) => c.id === 'stored')!.spec(false) },
        };
        for (const side of turnOrder(round)) {
          if (side !== 'pipe' || round === 0) await load.latency({ spec: sides[side].spec, concurrency: 16, warmup: 0, count: options.warm || 16 });
        }
        // Short turns, many of them: a burst of outside load falls on both sides alike.
        const pacedRound = { before: 0, after: 0, pipe: 0 };
        const c16Round = { before: 0, after: 0, pipe: 0 };
        for (let turn = 0; turn < options.turns; turn++) {
          for (const side of turnOrder(round + turn)) {
            const { pid, spec } = sides[side];
            pacedRound[side] += await cpuOf(load, pid, spec, { concurrency: 1, count: Math.ceil(options.paced.count / options.turns), warmup: 2, pauseMs: options.paced.pauseMs });
          }
        }
        for (let turn = 0; turn < options.turns; turn++) {
          for (const side of turnOrder(round + turn)) {
            const { pid, spec } = sides[side];
            c16Round[side] += await cpuOf(load, pid, spec, { concurrency: 16, count: Math.ceil(options.c16.count / options.turns), warmup: 16 });
            if (side !== 'pipe') rssMax[side] = Math.max(rssMax[side], memoryMb(pid).peak);
          }
        }
        const perRequest = (total: { before: number; after: number; pipe: number }, requests: number) => ({
          before: total.before / requests,
          after: total.after / requests,
          pipe: total.pipe / requests,
        });
        paced.push(perRequest(pacedRound, options.turns * (Math.ceil(options.paced.count / options.turns) + 2)));
        c16.push(perRequest(c16Round, options.turns * (Math.ceil(options.c16.count / options.turns) + 16)));
      } finally {
        await Promise.all(Object.values(proxies).map((proxy) => proxy.stop()));
      }
      // Each round as it ends: a run cut short still leaves its rounds.
      const ratio = (level: RoundCpu[]) => `before ${fmt(level.at(-1)!.before)} after ${fmt(level.at(-1)!.after)} pipe ${fmt(level.at(-1)!.pipe)} ratio ${fmt(level.at(-1)!.after / level.at(-1)!.before)}`;
      process.stdout.write(`round ${round + 1}/${options.rounds} (load average ${loadavg()[0]!.toFixed(2)}): c=1 paced ${ratio(paced)}; c=16 ${ratio(c16)}\n`);
    }
    process.stdout.write(`\n${formatLevel(`c=1, ${options.paced.pauseMs} ms between requests`, paced)}\n\n${formatLevel('c=16', c16)}\n`);
    process.stdout.write(`\npeak RSS (VmHWM) MB: before ${rssMax.before.toFixed(1)}, after ${rssMax.after.toFixed(1)}\nload average at end ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);

    if (options.profile) await profilePaced(options, upstream.origin, dynamo.endpoint, load, pipe);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

/** The working tree's server unminified under --cpu-prof, at c=1 paced; prints where the busy samples fall. */
async function profilePaced(options: AbOptions, upstreamOrigin: string, dynamoEndpoint: string, load: LoadClient, pipe: Child): Promise<void> {
  const bundle = await buildReadableServer(ROOT);
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-ab-prof-'));
  const launched = performance.now();
  const proxy = await startProxyServer({ upstreamOrigin, dynamoEndpoint, entry: bundle, nodeFlags: options.after.nodeFlags, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`], name: 'profiled' });
  const spec = buildContenders({ upstreamOrigin, pipe, proxy, portkey: pipe }).find((c) => c.id === 'stored')!.spec(false);
  const count = options.paced.count * options.rounds;
  let warmedAfterMs = 0;
  try {
    if (options.warm) await load.latency({ spec, concurrency: 16, warmup: 0, count: options.warm });
    warmedAfterMs = performance.now() - launched;
    await load.latency({ spec, concurrency: 1, warmup: options.paced.warmup, count, pauseMs: options.paced.pauseMs });
    await settle(500);
  } finally {
    await proxy.stop();
  }
  try {
    // The profile starts as the process does (after its launch): start-up and warm-up are left out.
    const summary = summariseProfile(profileDir, bundle, 30, options.warm ? warmedAfterMs : 0);
    process.stdout.write(`\nprofile, ${count} stored-key requests at c=1 paced (${options.warm ? 'after the warm-up' : 'start-up included'}), ${summary.sampledMs} ms busy: SDK ${summary.groups.awsSdk} %, lambda/ ${summary.groups.proxyCode} %, Node and V8 ${summary.groups.nodeAndV8} %, other ${summary.groups.other} %\n`);
    for (const p of summary.byPackage) process.stdout.write(`  ${p.name.padEnd(60)} ${fmt(p.selfMs, 0).padStart(6)} ms ${fmt(p.share, 1).padStart(5)} %\n`);
    process.stdout.write('\n');
    for (const f of summary.byFunction) process.stdout.write(`  ${f.name.slice(0, 40).padEnd(40)} ${f.where.slice(-60).padEnd(60)} ${fmt(f.selfMs, 0).padStart(6)} ms ${fmt(f.share, 1).padStart(5)} %\n`);
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
    rmSync(join(bundle, '..'), { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(ROOT, 'bench', 'ab.ts')) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
