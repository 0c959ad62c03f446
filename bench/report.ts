/** Renders a run's results as markdown: the summary table (also printed) and bench/RESULTS.md. */
import type { ContenderId } from './contenders';
import { PRICES } from './cost-model';
import type { PinnedContender } from './pinned';
import type { LatencyFigures, ResourceTable, Results } from './results';
import { sameRunRatio } from './ramp';
import { fmt, median, ratio } from './stats';

const LABELS: Record<ContenderId, string> = {
  direct: 'direct call (floor)',
  pipe: 'bare Node pipe proxy',
  stored: 'this proxy, stored key',
  passThrough: 'this proxy, pass-through',
  cacheHit: 'this proxy, cache hit',
  portkey: 'Portkey gateway 1.15.2, pass-through',
  directMessages: 'direct call, messages dialect',
  storedMessages: 'this proxy, stored key, messages',
  directResponses: 'direct call, Responses API',
  storedResponses: 'this proxy, stored key, Responses API',
};
const MAIN: ContenderId[] = ['direct', 'pipe', 'stored', 'passThrough', 'cacheHit', 'portkey'];

/** Figures right-aligned after the first column, unless `text` says every column holds words. */
const table = (head: string[], rows: string[][], text = false) =>
  [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 || text ? '---' : '--:')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

const plus = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`);

function baselineOf(id: ContenderId): ContenderId {
  if (id === 'storedMessages' || id === 'directMessages') return 'directMessages';
  return id === 'storedResponses' || id === 'directResponses' ? 'directResponses' : 'direct';
}

/** The Responses API stream against the chat stream, both through this proxy with a stored key. */
function responsesStreamTable(r: Results): string {
  const rows = (['c1', 'c16'] as const).flatMap((level) => {
    const s = r.streaming[level];
    const chat = s.stored?.eventLag;
    const responses = s.storedResponses?.eventLag;
    if (!chat || !responses) return [];
    const added = (lag: typeof chat, base: typeof chat | undefined) => (base ? `${plus(lag.p50 - base.p50, 3)} / ${plus(lag.p99 - base.p99, 3)}` : '–');
    return [
      [
        level === 'c1' ? 'c=1' : 'c=16',
        `${fmt(chat.p50, 3)} / ${fmt(chat.p99, 3)}`,
        `${fmt(responses.p50, 3)} / ${fmt(responses.p99, 3)}`,
        added(chat, s.direct?.eventLag),
        added(responses, s.directResponses?.eventLag),
        ratio(responses.p99, chat.p99),
      ],
    ];
  });
  if (rows.length === 0) return 'Not measured in this run: it predates the Responses API stream phase.';
  return table(['concurrency', 'chat stream lag p50 / p99 ms', 'Responses stream lag p50 / p99 ms', 'chat added over direct p50 / p99', 'Responses added over direct p50 / p99', 'Responses p99 × chat p99'], rows);
}

export function summaryTable(r: Results): string {
  const rows = MAIN.map((id) => {
    const paced = r.latency.c1Paced?.[id];
    const dPaced = r.latency.c1Paced?.direct;
    const c1 = r.latency.c1[id];
    const c16 = r.latency.c16[id];
    const d1 = r.latency.c1.direct;
    const d16 = r.latency.c16.direct;
    const s = r.streaming.c1[id];
    const sd = r.streaming.c1.direct;
    const s16 = r.streaming.c16[id];
    const sd16 = r.streaming.c16.direct;
    const t = r.throughput[id];
    const paced1 = r.resources.c1Paced[id];
    const res = r.resources.c16[id];
    return [
      LABELS[id],
      plus(paced && dPaced ? paced.p50 - dPaced.p50 : undefined),
      `${plus(c1 && d1 ? c1.p50 - d1.p50 : undefined)} / ${plus(c1 && d1 ? c1.p99 - d1.p99 : undefined)}`,
      `${plus(c16 && d16 ? c16.p50 - d16.p50 : undefined)} / ${plus(c16 && d16 ? c16.p99 - d16.p99 : undefined)}`,
      plus(s && sd ? s.firstByte.p50 - sd.firstByte.p50 : undefined),
      s?.eventLag && sd?.eventLag ? `${plus(s.eventLag.p50 - sd.eventLag.p50, 3)} / ${plus(s.eventLag.p99 - sd.eventLag.p99, 3)}` : '–',
      s16?.eventLag && sd16?.eventLag ? `${plus(s16.eventLag.p50 - sd16.eventLag.p50, 3)} / ${plus(s16.eventLag.p99 - sd16.eventLag.p99, 3)}` : '–',
      t ? `${fmt(t.maxRps, 0)} (${ratio(sameRunRatio(t, r.throughput.direct), 1)})` : '–',
      paced1 ? `${fmt(paced1.cpuMsPerRequest, 3)} (${ratio(paced1.cpuMsPerRequest, r.resources.c1Paced.pipe?.cpuMsPerRequest)})` : '–',
      res ? `${fmt(res.cpuMsPerRequest, 3)} (${ratio(res.cpuMsPerRequest, r.resources.c16.pipe?.cpuMsPerRequest)})` : '–',
      res ? `${fmt(res.rssMaxMb, 0)} (${ratio(res.rssMaxMb, r.resources.c16.pipe?.rssMaxMb)})` : '–',
    ];
  });
  return table(
    [
      'contender',
      'added ms p50, one request at a time',
      'added ms c=1 back to back p50 / p99',
      'added ms c=16 p50 / p99',
      'stream first byte added ms p50',
      'stream event lag added ms p50 / p99, c=1',
      'same, c=16',
      'max req/s, 0 errors (× direct)',
      'CPU ms/req one at a time (× pipe)',
      'CPU ms/req c=16 (× pipe)',
      'RSS MB c=16 (× pipe)',
    ],
    rows,
  );
}

function latencyTable(figures: Partial<Record<ContenderId, LatencyFigures>>, ids: ContenderId[]): string {
  return table(
    ['contender', 'n', 'p50 ms', 'p50 range over rounds', 'p95 ms', 'p99 ms', 'added p50 / p95 / p99 ms', 'p50 × baseline', 'errors'],
    ids
      .filter((id) => figures[id])
      .map((id) => {
        const f = figures[id]!;
        const b = figures[baselineOf(id)];
        return [
          LABELS[id],
          String(f.n),
          fmt(f.p50),
          f.roundP50s?.length ? `${fmt(Math.min(...f.roundP50s))}–${fmt(Math.max(...f.roundP50s))}` : '–',
          fmt(f.p95),
          fmt(f.p99),
          b ? `${plus(f.p50 - b.p50)} / ${plus(f.p95 - b.p95)} / ${plus(f.p99 - b.p99)}` : '–',
          ratio(f.p50, b?.p50),
          String(f.errors + f.mismatches),
        ];
      }),
  );
}

function streamTable(r: Results, level: 'c1' | 'c16'): string {
  const figures = r.streaming[level];
  return table(
    ['contender', 'first byte p50 / p99 ms', 'added first byte p50 ms', 'event lag p50 / p99 / max ms', 'added lag p50 / p99 ms', 'whole stream p50 ms'],
    (Object.keys(figures) as ContenderId[]).map((id) => {
      const f = figures[id]!;
      const b = figures[baselineOf(id)];
      return [
        LABELS[id],
        `${fmt(f.firstByte.p50)} / ${fmt(f.firstByte.p99)}`,
        plus(b ? f.firstByte.p50 - b.firstByte.p50 : undefined),
        f.eventLag ? `${fmt(f.eventLag.p50, 3)} / ${fmt(f.eventLag.p99, 3)} / ${fmt(f.eventLag.max, 2)}` : 'replay (no upstream)',
        f.eventLag && b?.eventLag ? `${plus(f.eventLag.p50 - b.eventLag.p50, 3)} / ${plus(f.eventLag.p99 - b.eventLag.p99, 3)}` : '–',
        fmt(f.total.p50),
      ];
    }),
  );
}

export function renderResults(r: Results): string {
  const out: string[] = [];
  const s = r.settings;
  out.push('# Benchmark results', '');
  const code = `commit ${r.source.commit}, ${r.source.clean ? 'clean working tree' : `uncommitted changes in ${r.source.changed.join(', ')}`}`;
  out.push(`Run of \`npm run bench\` on ${r.date} (${r.durationSeconds.toFixed(0)} s), ${code}. Every contender ran against the same fake upstream, in the same run, on this machine. What each figure means and the noise to expect: [METHOD.md](METHOD.md).`, '');
  if (r.quick) out.push('**Quick smoke run (`BENCH_QUICK=1`): small counts; these figures show the harness works, they are not measurements to quote.**', '');
  out.push('## Machine', '', `- CPU: ${r.machine.cpu}; \`nproc\`: ${r.machine.nproc}`, `- Node ${r.machine.node}, ${r.machine.os}`, `- 1-minute load average: ${fmt(r.loadAverage.start)} at the start, ${fmt(r.loadAverage.end)} at the end (above ${r.machine.nproc} means other work shared the cores)`, '- `free -h`:', '', '```', r.machine.memory, '```', '');
  out.push('## Set-up', '', `- Upstream (in the orchestrator process, loopback): JSON — ${s.upstream.json}; SSE — ${s.upstream.stream}.`);
  for (const [name, text] of Object.entries(s.contenders)) out.push(`- ${name}: ${text}`);
  out.push(`- Iterations: ${Object.entries(s.iterations).map(([k, v]) => `${k} ${v}`).join('; ')}.`);
  for (const note of s.notes) out.push(`- ${note}`);
  out.push('', '## Summary', '', 'Added = contender minus the direct call at the same percentile. Ratios: throughput against the direct call, CPU and RSS against the bare pipe proxy.', '', summaryTable(r), '');

  out.push('## Budgets', '', table(['budget', 'target', 'measured', 'verdict', 'why'], r.budgets.map((b) => [b.name, b.target, b.measured, b.met ? 'met' : '**missed**', b.why]), true), '');

  out.push('## Non-streaming latency, concurrency 1, back to back', '', latencyTable(r.latency.c1, [...MAIN, 'directMessages', 'storedMessages']), '');
  out.push('## Non-streaming latency, concurrency 1, 20 ms between requests', '', "Each request alone: the previous one's row writes have finished, as on a Lambda instance, which serves one request at a time.", '', latencyTable(r.latency.c1Paced, MAIN), '');
  out.push(
    yardstickText(r),
    '',
  );
  const call = r.storeCallCpuMs;
  out.push(
    `Client-side CPU of that one GetItem: ${fmt(call.proxyClient, 3)} ms through the proxy's own store client; for comparison ${fmt(call.sdkDocumentClient, 3)} ms (${ratio(call.sdkDocumentClient, call.proxyClient)}) through the AWS SDK's DocumentClient, ${fmt(call.sdkLowLevelCachedMiddleware, 3)} ms (${ratio(call.sdkLowLevelCachedMiddleware, call.proxyClient)}) through the SDK's low-level client with \`cacheMiddleware: true\` and pre-marshalled keys, ${fmt(call.bareHttp, 3)} ms (${ratio(call.bareHttp, call.proxyClient)}) as a bare unsigned node:http POST.`,
    '',
  );
  out.push('## Non-streaming latency, concurrency 16', '', latencyTable(r.latency.c16, MAIN), '');
  out.push('## Streaming, concurrency 1', '', 'Event lag = time from the fake upstream writing an SSE event to the client receiving it (both read the same monotonic clock); its excess over the direct call is what the proxy adds per chunk.', '', streamTable(r, 'c1'), '');
  out.push('## Streaming, concurrency 16', '', streamTable(r, 'c16'), '');
  out.push(
    '## Responses API stream against the chat stream',
    '',
    'The same fake provider answers a Responses API stream (`POST /v1/responses`, stamped text deltas) in the stream phases above, direct and through this proxy with a stored key. Through the proxy its events should wait no longer than a chat stream\'s: no added buffering.',
    '',
    responsesStreamTable(r),
    '',
  );

  out.push('## Throughput ramp (closed loop, non-streaming)', '');
  out.push(
    'In rounds: in each round every step is taken by every contender in turn, in an order rotated per round. A step column gives the median over rounds (errors summed); the maximum is the median of the rounds\' best steps with zero errors, and a ratio between two contenders the median of their per-round ratios.',
    '',
  );
  const steps = [...new Set(Object.values(r.throughput)[0]?.steps.map((step) => step.concurrency) ?? [])];
  out.push(
    table(
      ['contender', ...steps.map((c) => `c=${c} req/s (errors)`), "rounds' best", 'max with 0 errors', '× direct'],
      (Object.keys(r.throughput) as ContenderId[]).map((id) => {
        const t = r.throughput[id]!;
        const at = (concurrency: number) => t.steps.filter((step) => step.concurrency === concurrency);
        return [
          LABELS[id],
          ...steps.map((c) => `${fmt(median(at(c).map((step) => step.rps)), 0)} (${at(c).reduce((sum, step) => sum + step.errors, 0)})`),
          (t.roundMaxRps ?? []).map((rps) => fmt(rps, 0)).join(', '),
          `${fmt(t.maxRps, 0)} at c=${t.atConcurrency}`,
          ratio(sameRunRatio(t, r.throughput.direct), 1),
        ];
      }),
    ),
    '',
  );

  out.push(
    '## CPU and memory',
    '',
    "CPU = user + system time of the contender process (from /proc, 10 ms ticks) over its rounds, warm-ups included, divided by its requests (row writes included). One at a time = the c=1 phase with 20 ms after each answer, as a Lambda instance serves; c=16 = concurrent requests, where the proxy shares batched reads and merged writes between requests. DynamoDB Local is the store's own java process: its CPU over this proxy's rounds, per request, is not in the proxy's figure; its idle rate (measured while the contenders that never call it run) is subtracted, the gross figure is in brackets. RSS = highest resident set sampled every 100 ms during the phase (and separately during the throughput ramp). This proxy's three modes run in one process, so their RSS figures are that process at different times.",
    '',
    '### One request at a time (c=1, 20 ms apart)',
    '',
    resourceTable(r, r.resources.c1Paced, false),
    '',
    '### Concurrency 16',
    '',
    resourceTable(r, r.resources.c16, true),
    '',
  );

  out.push(
    '## Pinned: each contender alone on one CPU',
    '',
    "The same c=16 requests and a short throughput ramp, with the contender's process (all its threads) pinned to one CPU and everything else of the rig — DynamoDB Local's java, the load generator, the fake upstream, the idle contenders — pinned to the other, contenders interleaved round by round. It measures each contender's figure when the store does not share its core, as in AWS, where DynamoDB runs on other machines. Busy = share of the CPU in use during the contender's c=16 rounds and during its best throughput step, every process of the machine counted; in brackets the part the rig's own processes used (the rest is other work on the machine, and interrupt work the kernel charges to no process). A CPU near 100 % that the rig used in full set the limit; one that other work filled says the figures were taken under outside load. The shared-core figures of the same run are beside them.",
    '',
    pinnedText(r),
    '',
  );

  out.push('## Clients leaving mid-request', '', disconnectText(r), '');

  out.push('## Store round trips per request', '', 'Counted by a forwarder in front of DynamoDB Local (a second proxy instance, requests one at a time, every store answer held 20 ms so that overlapping calls are unmistakable). "Before upstream" = calls started before the fake upstream received the request (before the answer, for cache hits); waves = calls that overlap count once. Read units are the capacity DynamoDB Local reported (ReturnConsumedCapacity); write units as it reported them / as DynamoDB bills them, priced from the sizes of the written items (DynamoDB Local reports the units of a transaction per table, DynamoDB bills 2 per item per KB).', '');
  out.push(
    table(
      ['mode', 'calls before upstream', 'waves before upstream', 'calls while answering', 'calls after the answer (waves)', 'read units', 'write units (reported / billed)', 'ms before upstream', 'ms upstream → answer', 'writes finish after answer (ms)', 'operations per request'],
      r.roundTrips.map((t) => [
        t.mode,
        fmt(t.callsBeforeUpstream),
        fmt(t.wavesBeforeUpstream),
        fmt(t.callsDuringResponse),
        `${fmt(t.callsAfterResponse)} (${fmt(t.wavesAfterResponse)})`,
        fmt(t.readUnits),
        `${fmt(t.writeUnits)} / ${t.billedWriteUnits === undefined ? 'not counted' : fmt(t.billedWriteUnits)}`,
        fmt(t.msBeforeUpstream, 1),
        fmt(t.msUpstreamToAnswer, 1),
        fmt(t.tailAfterResponseMs, 1),
        Object.entries(t.operations).map(([op, n]) => `${op} ${n}`).join('; '),
      ]),
    ),
    '',
  );

  const c = r.coldStart;
  out.push('## Lambda bundle (cold-start proxy)', '', `- \`dist/lambda/handler.mjs\`: ${fmt(c.bundleBytes / 1024, 0)} KB (${fmt(c.bundleGzipBytes / 1024, 0)} KB gzipped).`);
  out.push(`- Import in a fresh Node process (Lambda global shimmed, store at a closed port), ${c.importMs.length} runs: median ${fmt(c.importMedianMs, 1)} ms (min ${fmt(Math.min(...c.importMs), 1)}, max ${fmt(Math.max(...c.importMs), 1)}); process start to handler ready: median ${fmt(c.processMedianMs, 1)} ms.`, '');

  out.push('## Infrastructure cost per million requests', '', `Lambda at the stack's configured ${r.cost.memoryMb} MB (lib/settings.ts), arm64.`, '');
  out.push(table(['item', '$ per million', 'basis'], [...r.cost.lines.map((l) => [l.item, fmt(l.usdPerMillion, 3), l.basis]), ['**total**', `**${fmt(r.cost.totalUsdPerMillion, 2)}**`, '']]));
  out.push('', `Same total at other memory sizes: ${r.cost.byMemory.map((m) => `${m.memoryMb} MB $${fmt(m.totalUsdPerMillion)}`).join(', ')}.`);
  out.push(`Fixed monthly: ${r.cost.fixedMonthly.map((l) => `${l.item} $${fmt(l.usdPerMillion)}`).join(', ')}. ${r.cost.dataTransfer.item}: $${fmt(r.cost.dataTransfer.usdPerMillion, 3)} per million (${r.cost.dataTransfer.basis}).`, '');
  out.push(`Price assumptions (${PRICES.region}):`, '', ...PRICES.notes.map((note) => `- ${note}`), '');

  if (r.profile) {
    out.push('## CPU profile of the proxy', '', `\`node --cpu-prof\` on an unminified build of the local server, ${r.profile.load}; ${r.profile.sampledMs} ms of busy samples (wall-clock sampling: on a shared machine it also counts time the process waited for a core, so read the shares, not the milliseconds). Self time: AWS SDK packages ${fmt(r.profile.groups.awsSdk, 1)} %, Node and V8 (HTTP client and server, socket writes, GC) ${fmt(r.profile.groups.nodeAndV8, 1)} %, this project's lambda/ code ${fmt(r.profile.groups.proxyCode, 1)} %, other packages ${fmt(r.profile.groups.other, 1)} %. By package and by function:`, '');
    out.push(table(['package / module', 'self ms', 'share'], r.profile.byPackage.map((p) => [p.name, fmt(p.selfMs, 0), `${fmt(p.share, 1)} %`])), '');
    out.push(table(['function', 'where', 'self ms', 'share'], r.profile.byFunction.map((p) => [`\`${p.name}\``, p.where, fmt(p.selfMs, 0), `${fmt(p.share, 1)} %`])), '');
  }
  out.push('Analysis of these figures and suggested fixes: [FINDINGS.md](FINDINGS.md).', '');
  return out.join('\n');
}

function yardstickText(r: Results): string {
  const y = r.yardstick;
  const spread = (values: number[] | undefined) => (values?.length ? `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}` : '–');
  return [
    "The budgets' yardstick: DynamoDB Local alone, through the proxy's own store adapters, measured in every round of the two c=1 phases between the contenders (so it meets the same outside load), and once cold at the start of the run. The wave is the store work a stored-key request waits for before forwarding, made by the same code the request path starts it with (the token gate, the budgets it calls for, the stored key when not cached); the latency budget's \"one round trip\" is the warm wave of the same phase.",
    '',
    table(
      ['store alone', 'GetItem p50 / p99 ms', 'wave p50 / p99 ms', 'wave p50 range over rounds', 'n'],
      [
        ['cold (start of run)', `${fmt(y.cold.getItem.p50)} / ${fmt(y.cold.getItem.p99)}`, `${fmt(y.cold.wave.p50)} / ${fmt(y.cold.wave.p99)}`, '–', String(y.cold.wave.n)],
        ['warm, c=1 back to back', `${fmt(y.c1.getItem.p50)} / ${fmt(y.c1.getItem.p99)}`, `${fmt(y.c1.wave.p50)} / ${fmt(y.c1.wave.p99)}`, spread(y.c1.waveRoundP50s), String(y.c1.wave.n)],
        ['warm, c=1 20 ms apart', `${fmt(y.c1Paced.getItem.p50)} / ${fmt(y.c1Paced.getItem.p99)}`, `${fmt(y.c1Paced.wave.p50)} / ${fmt(y.c1Paced.wave.p99)}`, spread(y.c1Paced.waveRoundP50s), String(y.c1Paced.wave.n)],
        ...(['c1', 'c1Paced'] as const).flatMap((phase) => {
          const beside = y[phase].waveBesideRowWrite;
          const label = phase === 'c1' ? 'back to back' : '20 ms apart';
          return beside ? [[`warm, c=1 ${label}, a row's write started just before`, '–', `${fmt(beside.p50)} / ${fmt(beside.p99)}`, '–', String(beside.n)]] : [];
        }),
      ],
    ),
  ].join('\n');
}

function resourceTable(r: Results, resources: ResourceTable, withRamp: boolean): string {
  const pipe = resources.pipe;
  return table(
    ['process', 'CPU ms/request', 'range over rounds', '× bare pipe', 'RSS before MB', 'RSS max MB', ...(withRamp ? ['RSS max ramp MB'] : []), 'DynamoDB Local CPU ms/request (gross)'],
    (Object.keys(resources) as Array<keyof ResourceTable>).map((id) => {
      const res = resources[id]!;
      // DynamoDB Local is a Java server, not a proxy: a ratio to the pipe would mean nothing.
      const store = id === 'dynamoDbLocal';
      const rounds = res.roundCpuMsPerRequest ?? [];
      return [
        store ? `DynamoDB Local (java), per proxied stored-key request (idle: ${fmt(res.storeIdleCpuMsPerSecond, 1)} ms CPU per second)` : LABELS[id],
        fmt(res.cpuMsPerRequest, 3),
        rounds.length ? `${fmt(Math.min(...rounds), 3)}–${fmt(Math.max(...rounds), 3)}` : '–',
        store ? '–' : ratio(res.cpuMsPerRequest, pipe?.cpuMsPerRequest),
        fmt(res.rssIdleMb, 0),
        fmt(res.rssMaxMb, 0),
        ...(withRamp ? [fmt(res.rssRampMaxMb, 0)] : []),
        res.storeCpuMsPerRequest === undefined ? '–' : `${fmt(res.storeCpuMsPerRequest, 3)} (${fmt(res.storeGrossCpuMsPerRequest, 3)})`,
      ];
    }),
  );
}

const PINNED: ContenderId[] = ['direct', 'pipe', 'stored', 'passThrough', 'portkey'];

function pinnedText(r: Results): string {
  const p = r.pinned;
  if (!p) return 'Not measured in this run: it predates the pinned phase.';
  if (p.skipped) return `Skipped in this run: ${p.skipped}.`;
  const pct = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '–' : `${(value * 100).toFixed(0)} %`);
  // The rig's part in brackets: the rest of a CPU's busy time was other work on the machine.
  const busy = (b: PinnedContender['busyC16'] | undefined, direct: boolean) =>
    `${direct ? '–' : `${pct(b?.contenderCpu)} (${pct(b?.contenderCpuByRig)})`} / ${pct(b?.restCpu)} (${pct(b?.restCpuByRig)})`;
  const direct = p.contenders.direct?.c16;
  const sharedDirect = r.latency.c16.direct;
  return [
    `Contender on CPU ${p.cpus?.contender}, the rest on CPU ${p.cpus?.rest}.`,
    '',
    table(
      ['contender', 'c=16 p50 / p99 ms', 'added p50 / p99 ms', 'shared cores: added p50 / p99 ms', 'CPU ms/request (c=16)', 'busy c=16: own CPU / other (rig\'s part)', 'max req/s, 0 errors', 'shared cores: max req/s', 'busy at max: own CPU / other (rig\'s part)', 'CPU ms/request at max: contender / DynamoDB Local'],
      PINNED.filter((id) => p.contenders[id]).map((id) => {
        const c = p.contenders[id]!;
        const shared = r.latency.c16[id];
        const t = r.throughput[id];
        return [
          LABELS[id],
          `${fmt(c.c16.p50)} / ${fmt(c.c16.p99)}`,
          direct ? `${plus(c.c16.p50 - direct.p50)} / ${plus(c.c16.p99 - direct.p99)}` : '–',
          shared && sharedDirect ? `${plus(shared.p50 - sharedDirect.p50)} / ${plus(shared.p99 - sharedDirect.p99)}` : '–',
          fmt(c.cpuMsPerRequest, 3),
          busy(c.busyC16, id === 'direct'),
          `${fmt(c.throughput.maxRps, 0)} at c=${c.throughput.atConcurrency}${c.c16.errors + c.c16.mismatches ? ` (${c.c16.errors + c.c16.mismatches} errors at c=16)` : ''}`,
          t ? fmt(t.maxRps, 0) : '–',
          busy(c.busyAtMax, id === 'direct'),
          `${fmt(c.cpuMsPerRequestAtMax, 3)} / ${fmt(c.storeCpuMsPerRequestAtMax, 3)}`,
        ];
      }),
    ),
  ].join('\n');
}

function disconnectText(r: Results): string {
  const kinds = ['beforeHeaders', 'midStream', 'midUpload', 'complete'] as const;
  const names = { beforeHeaders: 'left before the headers', midStream: 'left mid-stream', midUpload: 'left mid-upload', complete: 'stayed' };
  return [
    `Each contender in a fresh process meets the same seeded clients (${r.settings.iterations.disconnects}): a quarter each leave before the response headers (at a random moment up to 40 ms), leave after 1–5 events of a stream, leave after sending part of their body, or stay for the whole answer. Between batches the process is checked; a dead one counts as a crash and is started again. Per kind: sent / left as planned / whole answer first / errors / connection refused or reset.`,
    '',
    table(
      ['contender', ...kinds.map((k) => names[k]), 'crashes', 'survived', 'rows / upstream calls', 'RSS after MB'],
      r.disconnects.map((d) => [
        d.label,
        ...kinds.map((k) => {
          const x = d.byKind[k];
          return `${x.sent} / ${x.dropped} / ${x.answered} / ${x.errors} / ${x.refused}`;
        }),
        d.crashes ? `**${d.crashes}** (first after ${d.firstCrashAfter} clients: ${d.firstCrash})` : '0',
        d.survived ? 'yes' : '**no**',
        d.rows !== undefined ? `${d.rows} / ${d.upstreamCalls}` : '–',
        fmt(d.rssAfterMb, 0),
      ]),
    ),
  ].join('\n');
}
