/**
 * The pinned phase: each contender alone on one CPU, everything else of the rig (DynamoDB Local's
 * java, the orchestrator with the fake upstream, the load generator, the idle contenders) on the
 * other. In AWS the store runs on other machines; on a shared two-core machine it competes with the
 * proxy for the same cores. Pinned, each contender's c=16 latency and throughput no longer pay for
 * the store's CPU on their own core, and how busy each CPU was shows which side set the limit.
 * Affinities are set with `taskset` (util-linux) and restored afterwards, so later phases are
 * unaffected.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Contender, ContenderId } from './contenders';
import type { LoadClient } from './load-client';
import { cpuMs } from './process-stats';
import { roundBests, roundOrder, summariseRamp, type RampFigure, type RampStep, type RoundStep } from './ramp';
import type { LatencyFigures } from './results';
import { percentiles } from './stats';

/** How busy a CPU was over a window, 0–1 (all processes of the machine, not only the rig's). */
export interface CpuBusy {
  /** The CPU the measured contender had to itself. */
  contenderCpu: number;
  /** The CPU of DynamoDB Local, the load generator, the fake upstream and the idle contenders. */
  restCpu: number;
  /** The parts of those two the rig's own processes used; the remainder was other work on the machine. */
  contenderCpuByRig: number;
  restCpuByRig: number;
}

export interface PinnedContender {
  c16: LatencyFigures;
  /** The contender's own CPU per request over its c=16 rounds, row writes included (none for the direct call). */
  cpuMsPerRequest?: number;
  busyC16: CpuBusy;
  /** In rounds (ramp.ts): the median of each round's best step. */
  throughput: RampFigure;
  /** Averaged over each round's best step. */
  busyAtMax?: CpuBusy;
  /** The contender's CPU per completed request over each round's best step, pooled. */
  cpuMsPerRequestAtMax?: number;
  /** DynamoDB Local's CPU per completed request over the same steps (contenders that call it). */
  storeCpuMsPerRequestAtMax?: number;
}

export interface PinnedFigures {
  /** Why the phase did not run (no taskset, fewer than two CPUs); no figures then. */
  skipped?: string;
  /** The CPU each side was pinned to. */
  cpus?: { contender: number; rest: number };
  contenders: Partial<Record<ContenderId, PinnedContender>>;
}

export interface PinnedOptions {
  rounds: number;
  concurrency: number;
  warmup: number;
  count: number;
  steps: RampStep[];
  /** How many times every contender walks the steps, in an order rotated per round. */
  rampRounds: number;
}

/** Parses an affinity list such as "0,2-3" into CPU numbers. */
export function parseCpuList(list: string): number[] {
  return list
    .trim()
    .split(',')
    .filter(Boolean)
    .flatMap((part) => {
      const [from, to] = part.split('-').map(Number);
      return Array.from({ length: (to ?? from!) - from! + 1 }, (_, i) => from! + i);
    });
}

/** The CPUs a process may run on, as the kernel reports them. */
export function allowedCpus(pid: number): string {
  return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
}

/** The two CPUs the phase uses, or why it cannot run here. `command` is the taskset to call. */
export function pinningPlan(command = 'taskset'): { cpus: { contender: number; rest: number } } | { skipped: string } {
  const probe = spawnSync(command, ['-cp', String(process.pid)], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { skipped: `\`${command}\` (util-linux) is not available (${probe.error?.message ?? probe.stderr.trim()}), so no process could be pinned to a CPU` };
  const cpus = parseCpuList(/:\s*(\S+)\s*$/.exec(probe.stdout.trim())?.[1] ?? '');
  if (cpus.length < 2) return { skipped: `the run may use only CPU ${cpus.join(',') || '?'}: pinning the contender and the rest to different CPUs needs two` };
  return { cpus: { contender: cpus[0]!, rest: cpus[1]! } };
}

function pin(command: string, pid: number, list: string): void {
  // -a: every thread (libuv's pool, V8's helpers, the JVM's threads), not only the main one.
  const done = spawnSync(command, ['-a', '-cp', list, String(pid)], { encoding: 'utf8' });
  if (done.error || done.status !== 0) throw new Error(`${command} -a -cp ${list} ${pid} failed: ${done.error?.message ?? done.stderr.trim()}`);
}

/** Busy and total clock ticks per CPU, from /proc/stat. */
function cpuTicks(): Map<number, { busy: number; total: number }> {
  const out = new Map<number, { busy: number; total: number }>();
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+)\s+(.+)$/.exec(line);
    if (!match) continue;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = match[2]!.split(/\s+/).map(Number);
    const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
    out.set(Number(match[1]), { busy, total: busy + idle! + iowait! });
  }
  return out;
}

interface Snapshot {
  at: number;
  ticks: Map<number, { busy: number; total: number }>;
  contenderMs: number;
  storeMs: number;
  /** CPU of every rig process on the other CPU (the store included). */
  restMs: number;
}

/** CPU so far of a process that may have exited (0 then). */
function cpuMsOrZero(pid: number): number {
  try {
    return cpuMs(pid);
  } catch {
    return 0;
  }
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function meanBusy(windows: CpuBusy[]): CpuBusy {
  return {
    contenderCpu: mean(windows.map((b) => b.contenderCpu)),
    restCpu: mean(windows.map((b) => b.restCpu)),
    contenderCpuByRig: mean(windows.map((b) => b.contenderCpuByRig)),
    restCpuByRig: mean(windows.map((b) => b.restCpuByRig)),
  };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the phase: in every round each contender in turn gets the contender CPU while every other
 * process of the rig is moved to the other; c=16 rounds first, then the throughput steps in rounds
 * (ramp.ts), each step taken by every contender in turn. Every affinity is restored before it returns.
 */
export async function pinnedPhase(
  load: LoadClient,
  contenders: Contender[],
  rig: { otherPids: number[]; storePid?: number; storeUsers: Set<number> },
  options: PinnedOptions,
  command = 'taskset',
): Promise<PinnedFigures> {
  const found = pinningPlan(command);
  // A store left unpinned would float onto the contender's CPU: the phase would measure nothing new.
  const plan = rig.storeUsers.size > 0 && rig.storePid === undefined ? { skipped: "DynamoDB Local's java process was not found, so it could not be kept off the contender's CPU" } : found;
  if ('skipped' in plan) {
    process.stdout.write(`  skipped: ${plan.skipped}\n`);
    return { skipped: plan.skipped, contenders: {} };
  }
  const { cpus } = plan;
  const pids = [...new Set([...contenders.flatMap((c) => (c.pid !== undefined ? [c.pid] : [])), ...rig.otherPids, ...(rig.storePid !== undefined ? [rig.storePid] : [])])];
  const saved = pids.map((pid) => ({ pid, list: allowedCpus(pid) }));
  const arrange = (contender: Contender) => {
    for (const pid of pids) pin(command, pid, String(pid === contender.pid ? cpus.contender : cpus.rest));
  };
  const snapshot = (contender: Contender): Snapshot => ({
    at: performance.now(),
    ticks: cpuTicks(),
    contenderMs: contender.pid !== undefined ? cpuMs(contender.pid) : 0,
    storeMs: rig.storePid !== undefined ? cpuMs(rig.storePid) : 0,
    restMs: pids.filter((pid) => pid !== contender.pid).reduce((sum, pid) => sum + cpuMsOrZero(pid), 0),
  });
  const busy = (from: Snapshot, to: Snapshot): CpuBusy => {
    const share = (cpu: number) => {
      const a = from.ticks.get(cpu);
      const b = to.ticks.get(cpu);
      return a && b && b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : Number.NaN;
    };
    const wall = to.at - from.at;
    // Counters tick every 10 ms: a share is capped at the whole CPU.
    const used = (ms: number) => (wall > 0 ? Math.min(1, ms / wall) : Number.NaN);
    return { contenderCpu: share(cpus.contender), restCpu: share(cpus.rest), contenderCpuByRig: used(to.contenderMs - from.contenderMs), restCpuByRig: used(to.restMs - from.restMs) };
  };

  const latency = new Map<ContenderId, { totals: number[]; errors: number; mismatches: number; roundP50s: number[]; cpu: number; requests: number; from?: Snapshot; to?: Snapshot; busy: CpuBusy[] }>();
  const ramp = new Map<ContenderId, Array<RoundStep & { busy: CpuBusy; cpuMs: number; storeMs: number }>>(contenders.map((contender) => [contender.id, []]));
  try {
    const perRound = Math.ceil(options.count / options.rounds);
    for (let round = 0; round < options.rounds; round++) {
      for (const contender of contenders) {
        arrange(contender);
        const warmup = round === 0 ? options.warmup : Math.min(options.warmup, 2 * options.concurrency);
        const before = snapshot(contender);
        const result = await load.latency({ spec: contender.spec(false), concurrency: options.concurrency, warmup, count: perRound });
        const after = snapshot(contender);
        // Rows are written just after each answer: let the last ones land before reading the CPU counter.
        await settle(250);
        const entry = latency.get(contender.id) ?? { totals: [], errors: 0, mismatches: 0, roundP50s: [], cpu: 0, requests: 0, busy: [] };
        entry.totals.push(...result.totalMs);
        entry.errors += result.errors;
        entry.mismatches += result.mismatches;
        entry.roundP50s.push(percentiles(result.totalMs).p50);
        entry.cpu += contender.pid !== undefined ? cpuMs(contender.pid) - before.contenderMs : 0;
        entry.requests += warmup + perRound;
        entry.busy.push(busy(before, after));
        latency.set(contender.id, entry);
      }
    }
    for (let round = 0; round < options.rampRounds; round++) {
      for (const step of options.steps) {
        for (const contender of roundOrder(contenders, round)) {
          arrange(contender);
          const start = snapshot(contender);
          // The step's own window: the load generator settles for a moment after each step.
          const end = settle(step.durationMs).then(() => snapshot(contender));
          const result = await load.throughput({ spec: contender.spec(false), steps: [step] });
          const last = await end;
          ramp.get(contender.id)!.push({ ...result.steps[0]!, round, busy: busy(start, last), cpuMs: last.contenderMs - start.contenderMs, storeMs: last.storeMs - start.storeMs });
        }
      }
    }
  } finally {
    for (const { pid, list } of saved) {
      try {
        pin(command, pid, list);
      } catch {
        // A process that has exited keeps no affinity to restore.
      }
    }
  }

  const out: PinnedFigures = { cpus, contenders: {} };
  for (const contender of contenders) {
    const l = latency.get(contender.id)!;
    const steps = ramp.get(contender.id)!;
    const bests = roundBests(steps, options.rampRounds).filter((best) => best !== undefined);
    const completed = bests.reduce((sum, best) => sum + best.completed, 0);
    const pooled = (of: (best: (typeof bests)[number]) => number) => bests.reduce((sum, best) => sum + of(best), 0) / completed;
    const usesStore = contender.pid !== undefined && rig.storePid !== undefined && rig.storeUsers.has(contender.pid);
    const figures: PinnedContender = {
      c16: { ...percentiles(l.totals), errors: l.errors, mismatches: l.mismatches, roundP50s: l.roundP50s },
      ...(contender.pid !== undefined ? { cpuMsPerRequest: l.cpu / l.requests } : {}),
      busyC16: meanBusy(l.busy),
      throughput: summariseRamp(steps.map(({ busy: _busy, cpuMs: _cpu, storeMs: _store, ...step }) => step), options.rampRounds),
      ...(completed > 0
        ? {
            busyAtMax: meanBusy(bests.map((b) => b.busy)),
            ...(contender.pid !== undefined ? { cpuMsPerRequestAtMax: pooled((b) => b.cpuMs) } : {}),
            ...(usesStore ? { storeCpuMsPerRequestAtMax: pooled((b) => b.storeMs) } : {}),
          }
        : {}),
    };
    out.contenders[contender.id] = figures;
    const pct = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '–' : `${(value * 100).toFixed(0)} %`);
    process.stdout.write(
      `  ${contender.label.padEnd(42)} pinned c=${options.concurrency} p50 ${figures.c16.p50.toFixed(2)} ms  p99 ${figures.c16.p99.toFixed(2)} ms` +
        `${figures.cpuMsPerRequest !== undefined ? `  CPU ${figures.cpuMsPerRequest.toFixed(3)} ms/req` : ''}` +
        `  max ${figures.throughput.maxRps.toFixed(0)} req/s at c=${figures.throughput.atConcurrency}` +
        ` (busy: own CPU ${pct(figures.busyAtMax?.contenderCpu)}, ${pct(figures.busyAtMax?.contenderCpuByRig)} by the rig; other ${pct(figures.busyAtMax?.restCpu)}, ${pct(figures.busyAtMax?.restCpuByRig)} by the rig)` +
        `${l.errors + l.mismatches ? `  ! ${l.errors} errors, ${l.mismatches} mismatches` : ''}\n`,
    );
  }
  return out;
}
