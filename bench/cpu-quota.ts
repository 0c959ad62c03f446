/**
 * Lambda's CPU share, emulated: a process held in a cgroup (v1, `cpu` controller) whose quota is
 * the share of one core Lambda gives a function of this memory (one full vCPU at 1,769 MB,
 * proportionally less below). Needs root and cgroup v1's `cpu` hierarchy; where the machine has
 * neither, `cpuQuota` says why and the phase that needs it is not run (bench/METHOD.md).
 */
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FULL_VCPU_MB } from '../lib/cost-model';

const CPU_ROOT = '/sys/fs/cgroup/cpu';

export interface CpuQuota {
  memoryMb: number;
  quotaUs: number;
  periodUs: number;
  /** Moves the process into the group. */
  hold(pid: number): void;
  /** Moves the process back to the root group. */
  release(pid: number): void;
  remove(): void;
}

/** The quota of one period that Lambda's share at this memory is. */
export const lambdaShareQuotaUs = (memoryMb: number, periodUs: number) =>
  Math.round((Math.min(memoryMb, FULL_VCPU_MB) / FULL_VCPU_MB) * periodUs);

export function cpuQuota(memoryMb: number, periodUs: number): CpuQuota | { unavailable: string } {
  if (!existsSync(join(CPU_ROOT, 'cpu.cfs_quota_us')))
    return { unavailable: `no cgroup v1 cpu hierarchy at ${CPU_ROOT}` };
  const group = join(CPU_ROOT, `bench-lambda-share-${process.pid}-${periodUs}`);
  const quotaUs = lambdaShareQuotaUs(memoryMb, periodUs);
  try {
    mkdirSync(group);
    writeFileSync(join(group, 'cpu.cfs_period_us'), String(periodUs));
    writeFileSync(join(group, 'cpu.cfs_quota_us'), String(quotaUs));
  } catch (error) {
    return { unavailable: `cannot create a cpu cgroup: ${(error as Error).message}` };
  }
  return {
    memoryMb,
    quotaUs,
    periodUs,
    hold: (pid) => writeFileSync(join(group, 'cgroup.procs'), String(pid)),
    release: (pid) => writeFileSync(join(CPU_ROOT, 'cgroup.procs'), String(pid)),
    remove: () => rmdirSync(group),
  };
}
