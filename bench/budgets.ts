/** The issue's budgets, judged against one run's figures. */
import type { Measured } from './outputs';
import { pinnedP99Reading, pinnedThroughputReading } from './pinned-reading';
import type { Budget } from './results';
import { fmt } from './stats';

/** How far a p99 moves between runs on this machine (METHOD.md, "Noise"). */
const RESPONSES_P99_BAND = 1.5;

export function judgeBudgets(r: Measured): Budget[] {
  const budgets: Budget[] = [];
  const add = (name: string, target: string, measured: string, met: boolean, why: string) => budgets.push({ name, target, measured, met, why });
  const storedTrips = r.roundTrips.find((s) => s.mode === 'stored key');
  const callsPerRequest = storedTrips ? storedTrips.callsBeforeUpstream + storedTrips.callsDuringResponse + storedTrips.callsAfterResponse : Number.NaN;
  const storeCost = `${fmt(callsPerRequest, 0)} store calls per request at ~${fmt(r.storeCallCpuMs.proxyClient)} ms of client CPU each (bare HTTP: ${fmt(r.storeCallCpuMs.bareHttp)} ms)`;
  const direct16 = r.latency.c16.direct;

  // "One round trip" is the store work a request needs before forwarding, measured alone (token and
  // key read ‖ rate-limit write), warm, in the same rounds as the requests it is compared with.
  const levels = [
    { figures: r.latency.c1Paced, wave: r.yardstick.c1Paced.wave.p50, label: 'alone (20 ms apart)', why: 'each request alone, as a Lambda instance serves them' },
    { figures: r.latency.c1, wave: r.yardstick.c1.wave.p50, label: 'back to back', why: "the previous request's row writes still run while the next one starts" },
  ];
  for (const level of levels) {
    const wave = level.wave;
    for (const id of ['stored', 'passThrough'] as const) {
      const figures = level.figures[id];
      const base = level.figures.direct;
      if (!figures || !base) continue;
      const addedP50 = figures.p50 - base.p50;
      const own = addedP50 - wave;
      add(
        `Added p50, c=1 ${level.label}, ${id === 'stored' ? 'stored key' : 'pass-through'}`,
        `≤ 1 ms + one store round trip (${fmt(wave)} ms) = ${fmt(1 + wave)} ms`,
        `${fmt(addedP50)} ms`,
        addedP50 <= 1 + wave,
        addedP50 <= 1 + wave
          ? `the proxy's own work adds ${fmt(own)} ms to the one parallel store wave`
          : `${fmt(own)} ms beyond the store wave: ${level.why}; ${storeCost}`,
      );
    }
  }

  const portkey16 = r.latency.c16.portkey;
  for (const id of ['stored', 'passThrough'] as const) {
    const figures = r.latency.c16[id];
    if (!figures || !direct16 || !portkey16) continue;
    const ours = figures.p99 - direct16.p99;
    const theirs = portkey16.p99 - direct16.p99;
    add(
      `Added p99, c=16, ${id === 'stored' ? 'stored key' : 'pass-through'}, below Portkey`,
      `< Portkey's added p99 (${fmt(theirs)} ms)`,
      `${fmt(ours)} ms`,
      ours < theirs,
      ours < theirs
        ? 'Portkey does no store work, yet its Hono/fetch path costs more per request'
        : `at c=16 on shared cores latency is queueing behind CPU: ${storeCost}, and DynamoDB Local (${fmt(r.resources.c16.dynamoDbLocal?.cpuMsPerRequest)} ms CPU per request) shares the cores; ${pinnedP99Reading(r, id)}`,
    );
  }

  const storedRps = r.throughput.stored?.maxRps;
  const portkeyRps = r.throughput.portkey?.maxRps;
  if (storedRps !== undefined && portkeyRps !== undefined)
    add(
      "Throughput at 0 errors ≥ Portkey's (stored key)",
      `≥ Portkey's (${fmt(portkeyRps, 0)} req/s)`,
      `${fmt(storedRps, 0)} req/s (×${fmt(storedRps / portkeyRps)})`,
      storedRps >= portkeyRps,
      storedRps >= portkeyRps
        ? 'within budget on cores shared with DynamoDB Local'
        : `on cores shared with DynamoDB Local (${fmt(r.resources.c16.dynamoDbLocal?.cpuMsPerRequest)} ms of its CPU per request at c=16); ${pinnedThroughputReading(r, storeCost)}`,
    );

  const stored = storedTrips;
  if (stored) {
    add(
      'Store round trips before the upstream call',
      '≤ 1',
      `${fmt(stored.wavesBeforeUpstream)} (${fmt(stored.callsBeforeUpstream)} calls in parallel)`,
      stored.wavesBeforeUpstream <= 1,
      stored.wavesBeforeUpstream <= 1 ? 'the token and stored key read and the rate-limit write go out together, as one parallel wave' : 'some store calls wait for others before the upstream call',
    );
  }

  const direct = r.streaming.c1.direct?.eventLag;
  const pipeLag = r.streaming.c1.pipe?.eventLag;
  for (const id of ['stored', 'passThrough'] as const) {
    const lag = r.streaming.c1[id]?.eventLag;
    if (!lag || !direct) continue;
    const addedP99 = lag.p99 - direct.p99;
    add(
      `Stream chunks leave within 1 ms (${id === 'stored' ? 'stored key' : 'pass-through'}, c=1)`,
      'added event lag p99 ≤ 1 ms',
      `p50 +${fmt(lag.p50 - direct.p50, 3)} ms, p99 +${fmt(addedP99, 3)} ms`,
      addedP99 <= 1,
      addedP99 <= 1
        ? 'each event is written to the client as it is read (the usage tap does not buffer)'
        : lag.p50 - direct.p50 <= 1
          ? `no buffering at the median; the p99 tail is scheduling (the bare pipe's added p99 in the same run: +${fmt(pipeLag && pipeLag.p99 - direct.p99, 3)} ms); it grows when the proxy's thread is busy with store calls`
          : 'events wait inside the proxy; see the profile',
    );
  }

  // A p99 moves ±50 % between runs (METHOD.md): "within the chat stream's" allows that band.
  for (const level of ['c1', 'c16'] as const) {
    const chat = r.streaming[level].stored?.eventLag;
    const responses = r.streaming[level].storedResponses?.eventLag;
    if (!chat || !responses) continue;
    const within = responses.p99 <= RESPONSES_P99_BAND * chat.p99;
    add(
      `Responses API stream adds no buffering (stored key, c=${level === 'c1' ? 1 : 16})`,
      `event lag p99 within the chat stream's (≤ ×${RESPONSES_P99_BAND})`,
      `p99 ${fmt(responses.p99, 3)} ms, chat stream ${fmt(chat.p99, 3)} ms`,
      within,
      within
        ? 'each Responses event is written to the client as it is read, as chat events are'
        : responses.p50 <= RESPONSES_P99_BAND * chat.p50
          ? `the medians agree (${fmt(responses.p50, 3)} ms against ${fmt(chat.p50, 3)} ms): the tail is scheduling, not buffering`
          : 'Responses events wait inside the proxy longer than chat events; see the profile',
    );
  }

  const paced = r.resources.c1Paced.stored;
  if (paced) {
    const store = r.resources.c1Paced.dynamoDbLocal?.cpuMsPerRequest;
    add(
      'CPU per stored-key request, c=1 paced (as a Lambda instance serves)',
      '≤ 1.0 ms',
      `${fmt(paced.cpuMsPerRequest, 3)} ms (Portkey ${fmt(r.resources.c1Paced.portkey?.cpuMsPerRequest, 3)} ms, bare pipe ${fmt(r.resources.c1Paced.pipe?.cpuMsPerRequest, 3)} ms)`,
      paced.cpuMsPerRequest <= 1,
      `one request at a time shares no store call with another: every request pays its own ${fmt(callsPerRequest, 0)} calls; DynamoDB Local spends ${fmt(store, 3)} ms more in its own process (not counted here)`,
    );
  }
  const cpu = r.resources.c16.stored;
  if (cpu) {
    add(
      'CPU per stored-key request, c=16',
      '≤ 0.8 ms',
      `${fmt(cpu.cpuMsPerRequest, 3)} ms (Portkey ${fmt(r.resources.c16.portkey?.cpuMsPerRequest, 3)} ms, bare pipe ${fmt(r.resources.c16.pipe?.cpuMsPerRequest, 3)} ms)`,
      cpu.cpuMsPerRequest <= 0.8,
      cpu.cpuMsPerRequest <= 0.8
        ? 'concurrent requests share batched reads and merged writes'
        : `${storeCost}: ~${fmt(callsPerRequest * r.storeCallCpuMs.proxyClient)} ms of it${r.storeCallCpuMs.proxyClient <= 1.25 * r.storeCallCpuMs.bareHttp ? ', each call already near the bare-HTTP floor, so only fewer calls cut it further' : ''}; the bare pipe, doing no work, costs ${fmt(r.resources.c16.pipe?.cpuMsPerRequest)} ms here`,
    );
  }
  const rss = Math.max(r.resources.c16.stored?.rssMaxMb ?? 0, r.resources.c16.passThrough?.rssMaxMb ?? 0, r.resources.c16.cacheHit?.rssMaxMb ?? 0);
  const idle = r.resources.c16.stored?.rssIdleMb;
  if (rss)
    add(
      'Proxy RSS under load (c=16)',
      '≤ 120 MB',
      `${fmt(rss, 0)} MB`,
      rss <= 120,
      rss <= 120 ? 'within budget' : `${fmt(idle, 0)} MB before the c=16 rounds; V8 grows its heap with 16 requests and their store calls in flight and returns it lazily`,
    );

  const hit = r.latency.c1Paced.cacheHit ?? r.latency.c1.cacheHit;
  const hitBackToBack = r.latency.c1.cacheHit;
  const hitTrips = r.roundTrips.find((s) => s.mode === 'cache hit');
  if (hit)
    add(
      'Cache hit, p50 end to end (c=1, alone)',
      '≤ 5 ms',
      `${fmt(hit.p50)} ms (back to back: ${fmt(hitBackToBack?.p50)} ms)`,
      hit.p50 <= 5 && hit.mismatches === 0,
      hit.mismatches
        ? `${hit.mismatches} answers were not cache hits`
        : hit.p50 <= 5
          ? 'one parallel read wave, then a replay from the stored entry'
          : `${fmt(hitTrips?.callsBeforeUpstream, 0)} store calls before the answer (token and key, rate counter, cache entry) and ${fmt(hitTrips?.callsAfterResponse, 0)} after; the store wave alone is ${fmt(r.yardstick.c1Paced.wave.p50)} ms here`,
    );

  for (const d of r.disconnects) {
    const stayed = d.byKind.complete;
    const failedToStay = stayed.errors + stayed.refused;
    const rowsMissing = d.rows !== undefined && d.upstreamCalls !== undefined && d.rows < d.upstreamCalls;
    const met = d.crashes === 0 && d.survived && failedToStay === 0 && !rowsMissing;
    add(
      `Clients leaving mid-request: ${d.label}`,
      'no crash, every staying client answered, every upstream call has a row',
      `${d.crashes} crashes in ${d.clients} clients, ${failedToStay} of ${stayed.sent} staying clients failed${d.rows !== undefined ? `, ${d.rows} rows for ${d.upstreamCalls} upstream calls` : ''}`,
      met,
      met
        ? 'clients left before the headers, mid-stream and mid-upload; the process stayed up'
        : d.crashes
          ? `first crash after ${d.firstCrashAfter} clients: ${d.firstCrash}`
          : rowsMissing
            ? 'some upstream calls left no usage row'
            : `${stayed.firstError ?? 'the server did not answer a normal request afterwards'}`,
    );
  }

  const cold = r.coldStart;
  add('Lambda bundle import in a fresh process (median)', '≤ 150 ms', `${fmt(cold.importMedianMs, 0)} ms`, cold.importMedianMs <= 150, 'measured on this machine, not in Lambda');
  add('Lambda bundle size', '≤ 1.5 MB', `${fmt(cold.bundleBytes / 1024 / 1024)} MB (${fmt(cold.bundleGzipBytes / 1024, 0)} KB gzipped)`, cold.bundleBytes <= 1.5 * 1024 * 1024, 'minified ESM bundle');

  const cost = r.cost.totalUsdPerMillion;
  const at128 = r.cost.byMemory.find((m) => m.memoryMb === 128)?.totalUsdPerMillion;
  add(
    'Infrastructure per million requests, 3 s upstream',
    '≤ $10',
    `$${fmt(cost)} at ${r.cost.memoryMb} MB`,
    cost <= 10,
    cost <= 10
      ? 'within budget'
      : `Lambda bills the 3 s wait: at ${r.cost.memoryMb} MB that alone is $${fmt(r.cost.lines[1]?.usdPerMillion)}; at 128 MB the total would be $${fmt(at128)}`,
  );
  return budgets;
}
