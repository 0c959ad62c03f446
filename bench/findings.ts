/**
 * bench/FINDINGS.md: a reading of one run, rendered from the same results.json as RESULTS.md and
 * the README, so the three never quote different runs. Each statement is chosen by the figures
 * (met or missed, larger or smaller), not written once and left to go stale.
 */
import { pinnedFinding } from './pinned-reading';
import type { Results } from './results';
import { fmt } from './stats';

export function renderFindings(r: Results): string {
  const h = r.headline;
  const out: string[] = ['# Benchmark findings', ''];
  out.push(
    `A reading of the run in [RESULTS.md](RESULTS.md) (${h.date}, commit ${h.commit}, ${h.clean ? 'clean working tree' : 'uncommitted changes'}${h.quick ? ', **quick smoke run: small counts, not figures to quote**' : ''}), ` +
      `generated from the same bench/results.json. How each figure is taken and how much it moves between runs: [METHOD.md](METHOD.md).`,
    '',
    '## What the figures say',
    '',
  );
  const stored = r.roundTrips.find((t) => t.mode === 'stored key');
  const calls = stored ? stored.callsBeforeUpstream + stored.callsDuringResponse + stored.callsAfterResponse : Number.NaN;
  const ops = stored ? Object.entries(stored.operations).map(([op, n]) => `${op} ×${fmt(n, 2)}`).join(', ') : 'not counted';

  const ownWork = h.ownWorkAlone;
  out.push(
    `- **One request alone adds ${fmt(h.alone.stored)} ms (stored key) over the direct call**; the store's pre-upstream wave alone takes ${fmt(h.store.waveWarm)} ms warm in the same rounds, ` +
      `so the proxy's own work is ${ownWork <= 1 ? 'within' : 'beyond'} the 1 ms it is allowed (${fmt(ownWork)} ms). ` +
      `Cold, at the start of the run, the same wave took ${fmt(h.store.waveCold)} ms: ${Math.abs(h.store.waveCold - h.store.waveWarm) > 0.5 ? 'a yardstick taken once, cold, would have moved the budget by that much' : 'close to the warm figure in this run'}.`,
  );
  out.push(
    `- **Back to back the proxy adds ${fmt(h.backToBack.stored)} ms** (pass-through ${fmt(h.backToBack.passThrough)} ms): ` +
      (h.backToBack.stored > h.alone.stored + 0.5 ? "the previous request's writes after the answer still run, in the proxy and in DynamoDB Local, when the next request's reads go out." : 'about the same as alone: the writes after the answer do not delay the next request.'),
  );
  out.push(
    `- **CPU one request at a time: ${fmt(h.cpuAlone.stored)} ms per stored-key request** (budget 1.0 ms: ${h.cpuAlone.stored <= 1 ? 'met' : 'missed'}), ×${fmt(h.cpuVsPortkey.alone)} Portkey's ${fmt(h.cpuAlone.portkey)} ms; ` +
      `at c=16 ${fmt(h.cpuC16.stored)} ms (×${fmt(h.cpuVsPortkey.c16)} Portkey's). ` +
      (h.cpuAlone.stored > h.cpuC16.stored * 1.2
        ? 'Alone is the figure a Lambda instance sees: it serves one request at a time, so it never shares a batched read or a merged write with another request. '
        : '') +
      `A stored-key request makes ${fmt(calls, 1)} store calls (${ops}) at ~${fmt(r.storeCallCpuMs.proxyClient, 3)} ms of client CPU each (a bare HTTP POST: ${fmt(r.storeCallCpuMs.bareHttp, 3)} ms). ` +
      `DynamoDB Local's own process adds ${fmt(h.cpuAlone.dynamoDbLocal)} ms per request alone and ${fmt(h.cpuC16.dynamoDbLocal)} ms at c=16, on the same cores; real DynamoDB runs elsewhere.`,
  );
  out.push(
    `- **Streams:** added event lag p99 ${fmt(h.stream.c1.lagP99)} ms at c=1 (bare pipe ${fmt(h.stream.c1.pipeLagP99)} ms) and ${fmt(h.stream.c16.lagP99)} ms at c=16 (bare pipe ${fmt(h.stream.c16.pipeLagP99)} ms, Portkey ${fmt(h.stream.c16.portkeyLagP99)} ms). ` +
      (h.stream.c16.lagP99 > h.stream.c16.pipeLagP99 + 2
        ? "At c=16 events wait behind other requests' store calls on the same event loop: the median stays small, the tail does not."
        : 'At c=16 the tail is close to the bare pipe: events are not held behind store work.'),
  );
  out.push(
    `- **Throughput:** ${fmt(h.throughput.stored, 0)} req/s against Portkey's ${fmt(h.throughput.portkey, 0)} (×${fmt(h.throughput.storedVsPortkey)}, the median of ${h.throughput.rounds} rounds' ratios), with DynamoDB Local on the same cores ` +
      `(${fmt(h.cpuC16.dynamoDbLocal)} ms of its CPU per request at c=16).`,
  );
  out.push(pinnedFinding(r));
  out.push(`- **Cache hit alone:** ${fmt(h.cacheHitAlone)} ms p50 end to end.`);
  out.push(
    `- **RSS:** ${fmt(h.rss.before, 0)} MB before the c=16 rounds, ${fmt(h.rss.c16, 0)} MB during them; Node alone (the bare pipe) ${fmt(r.resources.c16.pipe?.rssMaxMb, 0)} MB under the same load. ` +
      "This is the local server's figure: a Lambda instance serves one request at a time, and its peak is in [MEMORY.md](MEMORY.md).",
  );
  const drops = r.disconnects;
  if (drops.length)
    out.push(
      `- **Clients leaving mid-request:** ` +
        drops
          .map((d) => `${d.label}: ${d.crashes ? `**${d.crashes} crashes**, the first after ${d.firstCrashAfter} clients (${d.firstCrash})` : 'no crash'}, ${d.survived ? 'up and answering afterwards' : '**not answering afterwards**'}${d.rows !== undefined ? `, ${d.rows} rows for ${d.upstreamCalls} upstream calls` : ''}`)
          .join('; ') +
        '.',
    );
  out.push(`- **Lambda:** bundle ${fmt(h.bundle.mb)} MB, imported in ${fmt(h.bundle.importMs, 0)} ms; $${fmt(h.cost.total)} per million requests at ${h.cost.memoryMb} MB with a ${h.cost.upstreamSeconds} s upstream, $${fmt(h.cost.lambdaWait)} of it Lambda duration; at 128 MB $${fmt(h.cost.at128)}.`);
  const consumer = r.cost.streamConsumer;
  const writes = r.cost.lines.find((line) => line.item === 'DynamoDB writes');
  if (consumer)
    out.push(
      `- **Cost of the rows and rollups:** DynamoDB writes $${fmt(writes?.usdPerMillion)} per million (${writes?.basis ?? 'not counted'}); the stream consumer $${fmt(consumer.usdPerMillion)} at ${fmt(consumer.monthlyRequests / 1e6, 0)} million requests a month (${fmt(consumer.rowsPerBatch, 1)} rows per batch), $${fmt(consumer.worstCaseUsdPerMillion)} at worst, each row alone in a batch.`,
    );
  out.push('');

  out.push(...storeCallFloor(r), '');

  out.push('## Budgets', '');
  const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
  for (const b of r.budgets) out.push(`- ${b.met ? 'Met' : '**Missed**'}: ${b.name} — ${b.measured} (target ${b.target}).${b.met ? '' : ` ${sentence(b.why)}`}`);
  out.push('');

  out.push(
    '## Caveats',
    '',
    "- DynamoDB Local is a Java process on the same cores; its conditional writes are slower than its reads, which is why the pre-upstream wave is longer than a GetItem. Real DynamoDB is remote and answers over TLS (more client CPU per call, not less).",
    "- The local server's adapter (event building, response shim) is part of the measured CPU; in Lambda the runtime does that work.",
    `- In Lambda, CPU per request becomes latency: CPU is allocated in proportion to memory (a full vCPU at 1,769 MB), so at ${h.cost.memoryMb} MB a millisecond of CPU takes several of wall time.`,
    `- The machine is shared: the 1-minute load was ${fmt(r.loadAverage.start)} at the start and ${fmt(r.loadAverage.end)} at the end on ${r.machine.nproc} cores. Compare contenders within one run; METHOD.md gives the spread to expect between runs.`,
    '',
  );
  return out.join('\n');
}

/**
 * Why the request path makes the store calls it does before forwarding, from the counted
 * operations: what DynamoDB's API allows on this table design, and which design would need fewer.
 */
function storeCallFloor(r: Results): string[] {
  const stored = r.roundTrips.find((t) => t.mode === 'stored key');
  if (!stored) return [];
  const before = Object.entries(stored.operations)
    .filter(([op]) => !/usage-logs/.test(op))
    .map(([op]) => op)
    .join(' and ');
  const pipe = r.resources.c1Paced.pipe?.cpuMsPerRequest;
  const proxy = r.resources.c1Paced.stored?.cpuMsPerRequest;
  const calls = stored.callsBeforeUpstream + stored.callsDuringResponse + stored.callsAfterResponse;
  const out = ['## Store calls before forwarding', ''];
  if (stored.callsBeforeUpstream <= 1)
    out.push(
      `- **Counted: ${fmt(stored.callsBeforeUpstream, 0)} call in ${fmt(stored.wavesBeforeUpstream, 0)} wave before the upstream call** (${before}), then ${fmt(stored.callsAfterResponse, 0)} after the answer (the row with its spend counters, one transaction). ` +
        "The call is the token gate: one item per token in the rate-limits table holds the token's count per minute beside a copy of what authentication needs (secret hash, scopes, revocation, whether the token has a budget). One conditional UpdateItem counts the request only for a real, unrevoked token under its limit and returns the copy (the old item when the condition fails), so authentication, the rate limit and the budget decision need no other call. The stored key's ciphertext comes from a 30-second per-instance cache.",
      "- **What it costs:** every token change (issue, revoke, token budget set or removed) writes the token item and its gate in one two-item transaction; a key saved through one Lambda instance reaches the others within the key cache's 30 seconds; a request naming a requester reads that requester's budget beside the gate (a requester budget spans every token of its account, so no token's gate can say whether one applies), and a token with a budget has its budget read beside the gate, both in the same wave. A token with no gate yet (issued by an older version) gets one built from its token item on its first request: three calls in a row, once.",
    );
  else
    out.push(
      `- **Counted: ${fmt(stored.callsBeforeUpstream, 0)} calls in ${fmt(stored.wavesBeforeUpstream, 0)} wave before the upstream call** (${before}), then ${fmt(stored.callsAfterResponse, 0)} after the answer. ` +
        'This run is from a version that read the token, its budgets and the stored key in one BatchGetItem beside the rate counter\'s UpdateItem; the token gate (one conditional UpdateItem returning a copy of the token) replaced both later.',
    );
  if (pipe !== undefined && proxy !== undefined)
    out.push(
      `- **What a call costs in CPU:** one request at a time the bare pipe, which makes two HTTP exchanges (client in, upstream out) and nothing else, uses ${fmt(pipe, 3)} ms per request; this proxy, with ${fmt(calls, 0)} store calls more, ${fmt(proxy, 3)} ms. ` +
        (pipe >= 1
          ? 'The 1.0 ms budget for one request at a time is below what Node spends on the bare pipe on this machine, so no proxy that calls a store over HTTP meets it here; '
          : '') +
        `each store call costs ~${fmt(r.storeCallCpuMs.proxyClient, 3)} ms in the store client alone (a bare unsigned POST: ${fmt(r.storeCallCpuMs.bareHttp, 3)} ms), so the number of calls, not the pipeline's own code, sets the figure.`,
    );
  return out;
}
