/**
 * What the pinned phase says about the c=16 p99 and throughput budgets: the same figures with the
 * store off the contender's core, which side of the machine set the limit, and so which design
 * would meet the budget. Chosen by the figures, shared by the budgets and FINDINGS.md.
 */
import type { ContenderId } from './contenders';
import type { Measured } from './outputs';
import type { CpuBusy, PinnedContender } from './pinned';
import { sameRunRatio } from './ramp';
import { fmt } from './stats';

/** A CPU this busy (0–1) was the limit of its side. */
const SATURATED = 0.9;

/** Busy beyond the rig's own processes' share: other work on the machine (and interrupt work the kernel charges to no process). */
const OUTSIDE = 0.25;

const pct = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '–' : `${(value * 100).toFixed(0)} %`);

/** Says so when much of a CPU's busy time was not the rig's: the figures were taken under outside load. */
function outsideLoad(b: CpuBusy | undefined): string {
  if (!b) return '';
  const own = b.contenderCpu - b.contenderCpuByRig;
  const rest = b.restCpu - b.restCpuByRig;
  return own > OUTSIDE || rest > OUTSIDE ? `; other work on the machine took ${pct(Math.max(0, own))} of the contender's CPU and ${pct(Math.max(0, rest))} of the other, so these pinned figures were taken under outside load` : '';
}

function measuredPinned(r: Measured): Partial<Record<ContenderId, PinnedContender>> | undefined {
  return r.pinned && !r.pinned.skipped ? r.pinned.contenders : undefined;
}

/** Added p99 at c=16 in the pinned phase, over the pinned direct call. */
export function pinnedAddedP99(r: Measured, id: ContenderId): number | undefined {
  const p = measuredPinned(r);
  const ours = p?.[id]?.c16;
  const direct = p?.direct?.c16;
  return ours && direct ? ours.p99 - direct.p99 : undefined;
}

/** The requests per second one CPU could serve for this contender, from its CPU per request at its best step. */
export function ownCoreCeiling(c: PinnedContender | undefined): number | undefined {
  const cpu = c?.cpuMsPerRequestAtMax;
  return cpu && cpu > 0 ? 1000 / cpu : undefined;
}

function notMeasured(r: Measured): string {
  return r.pinned?.skipped ? `the pinned phase was skipped (${r.pinned.skipped})` : 'no pinned measurement in this run';
}

/** Why the added p99 at c=16 is where it is, from the pinned phase. */
export function pinnedP99Reading(r: Measured, id: 'stored' | 'passThrough'): string {
  const p = measuredPinned(r);
  const ours = pinnedAddedP99(r, id);
  const theirs = pinnedAddedP99(r, 'portkey');
  const c = p?.[id];
  if (!p || ours === undefined || theirs === undefined || !c) return notMeasured(r);
  const head = `pinned (the proxy alone on one CPU; DynamoDB Local, the load and the upstream on the other) it adds ${fmt(ours)} ms p99 against Portkey's ${fmt(theirs)} ms`;
  const outside = outsideLoad(c.busyC16);
  if (ours < theirs) return `${head}: below Portkey's once the store does not share its core, so the miss on shared cores is contention with DynamoDB Local's process, which in AWS runs on other machines; a store off the proxy's machine, as deployed, meets it${outside}`;
  const own = c.busyC16.contenderCpu;
  const rest = c.busyC16.restCpu;
  const cpu = `${fmt(c.cpuMsPerRequest, 3)} ms of its own CPU per request against Portkey's ${fmt(p.portkey?.cpuMsPerRequest, 3)} ms`;
  if (rest >= SATURATED && own >= SATURATED)
    return `${head}: still above, with both CPUs busy (the proxy's ${pct(own)}, the other ${pct(rest)}; other work on the machine counts too), so this run does not tell the proxy's own queueing from the store's; the proxy's own part is ${cpu}${outside}`;
  if (rest >= SATURATED && rest > own)
    return `${head}: still above, and the CPU holding DynamoDB Local was ${pct(rest)} busy (the proxy's own ${pct(own)}), so the store's answers queued there; on this machine no core is left for a store of its own, and the figure with a remote store is not measurable here; the proxy's own part is ${cpu}${outside}`;
  return `${head}: still above with its CPU to itself (${pct(own)} busy, the other ${pct(rest)}): 16 requests in flight queue behind ${cpu}, so fewer store calls per request is the design that would meet it${outside}`;
}

/** Why the proxy's throughput is where it is against Portkey's, from the pinned phase. */
export function pinnedThroughputReading(r: Measured, storeCost: string): string {
  const p = measuredPinned(r);
  const ours = p?.stored;
  const theirs = p?.portkey;
  if (!p || !ours || !theirs) return notMeasured(r);
  const head = `pinned, the proxy reaches ${fmt(ours.throughput.maxRps, 0)} req/s against Portkey's ${fmt(theirs.throughput.maxRps, 0)} (×${fmt(sameRunRatio(ours.throughput, theirs.throughput))}, the median of the rounds' ratios)`;
  const outside = outsideLoad(ours.busyAtMax);
  if (sameRunRatio(ours.throughput, theirs.throughput) >= 1)
    return `${head}: at or above Portkey's once the store is off its core, so the miss on shared cores is the CPU DynamoDB Local takes from them (${fmt(ours.storeCpuMsPerRequestAtMax, 3)} ms per request pinned), which in AWS runs on other machines${outside}`;
  const own = ours.busyAtMax?.contenderCpu ?? Number.NaN;
  const rest = ours.busyAtMax?.restCpu ?? Number.NaN;
  const ceiling = ownCoreCeiling(ours);
  const portkeyCeiling = ownCoreCeiling(theirs);
  const ceilings = `its own CPU per request at its best steps (${fmt(ours.cpuMsPerRequestAtMax, 3)} ms) allows ~${fmt(ceiling, 0)} req/s per core, Portkey's (${fmt(theirs.cpuMsPerRequestAtMax, 3)} ms) ~${fmt(portkeyCeiling, 0)}`;
  const design =
    ceiling !== undefined && portkeyCeiling !== undefined && ceiling >= portkeyCeiling
      ? 'with the store on other machines, as DynamoDB is in AWS, the proxy would be the faster of the two: a remote store is the design that meets it'
      : `even with the store elsewhere it would stay below Portkey's: ${storeCost}, so fewer store calls per request is the design that would meet it`;
  if (rest >= SATURATED && own >= SATURATED)
    return `${head}: both CPUs were busy (the proxy's ${pct(own)}, the other ${pct(rest)}; other work on the machine counts too), so this run does not tell which side set the limit; ${ceilings}; ${design}${outside}`;
  if (rest >= SATURATED && rest > own)
    return `${head}: the limit was the CPU holding DynamoDB Local, the load and the upstream (${pct(rest)} busy, the proxy's own ${pct(own)}); DynamoDB Local spent ${fmt(ours.storeCpuMsPerRequestAtMax, 3)} ms of CPU per request there; ${ceilings}; ${design}${outside}`;
  return `${head}: the proxy's own CPU was the limit (${pct(own)} busy, the other ${pct(rest)}); ${ceilings}; ${design}${outside}`;
}

/** FINDINGS.md's line on the pinned phase. */
export function pinnedFinding(r: Measured): string {
  const p = measuredPinned(r);
  if (!p) return `- **Pinned (each contender alone on one CPU):** ${notMeasured(r)}.`;
  const added = (id: ContenderId) => fmt(pinnedAddedP99(r, id));
  const rps = (id: ContenderId) => fmt(p[id]?.throughput.maxRps, 0);
  const busy = (id: ContenderId) => `${pct(p[id]?.busyAtMax?.contenderCpu)} / ${pct(p[id]?.busyAtMax?.restCpu)}`;
  return (
    `- **Pinned, the store off the contender's core** (contender alone on one CPU; DynamoDB Local, the load and the upstream on the other): added p99 at c=16 ${added('stored')} ms with a stored key, ${added('passThrough')} ms pass-through, Portkey ${added('portkey')} ms, bare pipe ${added('pipe')} ms; ` +
    `throughput ${rps('stored')} req/s against Portkey's ${rps('portkey')} (bare pipe ${rps('pipe')}). ` +
    `At their best steps the CPUs were busy (own / other) ${busy('stored')} for this proxy, ${busy('portkey')} for Portkey: the side near 100 % set the limit. ` +
    `One CPU's worth of requests at each one's own CPU per request: ~${fmt(ownCoreCeiling(p.stored), 0)} req/s for this proxy, ~${fmt(ownCoreCeiling(p.portkey), 0)} for Portkey` +
    `${outsideLoad(p.stored?.busyAtMax)}.`
  );
}
