/**
 * The load generator: its own process (forked by the orchestrator), so its CPU
 * never counts as the proxy's. Closed-loop workers over node:http with a
 * keep-alive agent; every loop is bounded by a request count or a deadline.
 */
import { Agent, request } from 'node:http';
import { seededRandom } from '../test/fakes/behaviour';
import type {
  DisconnectJob,
  DisconnectKind,
  DisconnectKindResult,
  DisconnectResult,
  LatencyJob,
  LatencyResult,
  LoadJob,
  LoadResult,
  RequestSpec,
  ThroughputJob,
  ThroughputResult,
} from './load-protocol';
import { percentiles } from './stats';

interface Outcome {
  ok: boolean;
  totalMs: number;
  firstByteMs: number;
  eventLagMs: number[];
  mismatch: boolean;
  status: string;
  error?: string;
}

const STAMP = /(?:fp_|@)(\d{10,})/g;

function send(spec: RequestSpec, agent: Agent, body: Buffer, url: URL): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const outcome: Outcome = { ok: false, totalMs: 0, firstByteMs: 0, eventLagMs: [], mismatch: false, status: 'error' };
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent, headers: { ...spec.headers, 'content-length': body.length } },
      (res) => {
        outcome.status = String(res.statusCode);
        if (spec.expectHeader) outcome.mismatch = res.headers[spec.expectHeader[0]] !== spec.expectHeader[1];
        let pending = '';
        let first = true;
        res.on('data', (chunk: Buffer) => {
          if (first) {
            outcome.firstByteMs = performance.now() - started;
            first = false;
          }
          if (!spec.readStamps) return;
          const arrived = process.hrtime.bigint();
          pending += chunk.toString('utf8');
          const end = pending.lastIndexOf('\n\n');
          if (end < 0) return;
          const complete = pending.slice(0, end);
          pending = pending.slice(end + 2);
          for (const match of complete.matchAll(STAMP)) outcome.eventLagMs.push(Number(arrived - BigInt(match[1]!)) / 1e6);
        });
        res.on('end', () => {
          outcome.totalMs = performance.now() - started;
          outcome.ok = res.statusCode === 200;
          if (!outcome.ok) outcome.error = `HTTP ${res.statusCode}`;
          resolve(outcome);
        });
        res.on('error', (error) => resolve({ ...outcome, ok: false, error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ ...outcome, ok: false, error: error.message }));
    // No request may hang a bounded run: a silent answer counts as an error after 30 s.
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end(body);
  });
}

async function runLatency(job: LatencyJob): Promise<LatencyResult> {
  const url = new URL(job.spec.url);
  const body = Buffer.from(job.spec.body);
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency });
  const result: LatencyResult = { totalMs: [], firstByteMs: [], eventLagMs: [], errors: 0, mismatches: 0, statuses: {}, elapsedMs: 0 };
  const run = async (total: number, record: boolean) => {
    let issued = 0;
    const worker = async () => {
      while (issued < total) {
        issued++;
        const outcome = await send(job.spec, agent, body, url);
        if (job.pauseMs) await new Promise((resolve) => setTimeout(resolve, job.pauseMs));
        if (!record) continue;
        result.statuses[outcome.status] = (result.statuses[outcome.status] ?? 0) + 1;
        if (outcome.mismatch) result.mismatches++;
        if (!outcome.ok) {
          result.errors++;
          result.firstError ??= outcome.error;
          continue;
        }
        result.totalMs.push(outcome.totalMs);
        result.firstByteMs.push(outcome.firstByteMs);
        for (const lag of outcome.eventLagMs) result.eventLagMs.push(lag);
      }
    };
    await Promise.all(Array.from({ length: job.concurrency }, worker));
  };
  await run(job.warmup, false);
  const started = performance.now();
  await run(job.count, true);
  result.elapsedMs = performance.now() - started;
  agent.destroy();
  return result;
}

async function runThroughput(job: ThroughputJob): Promise<ThroughputResult> {
  const url = new URL(job.spec.url);
  const body = Buffer.from(job.spec.body);
  const steps: ThroughputResult['steps'] = [];
  for (const step of job.steps) {
    const agent = new Agent({ keepAlive: true, maxSockets: step.concurrency });
    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    const started = performance.now();
    const deadline = started + step.durationMs;
    const worker = async () => {
      while (performance.now() < deadline) {
        const outcome = await send(job.spec, agent, body, url);
        if (outcome.ok && !outcome.mismatch) latencies.push(outcome.totalMs);
        else {
          errors++;
          firstError ??= outcome.error ?? 'unexpected response header';
        }
      }
    };
    await Promise.all(Array.from({ length: step.concurrency }, worker));
    const elapsed = performance.now() - started;
    const spread = percentiles(latencies);
    steps.push({ concurrency: step.concurrency, durationMs: elapsed, completed: latencies.length, errors, rps: (latencies.length * 1000) / elapsed, p50: spread.p50, p99: spread.p99, firstError });
    agent.destroy();
    // Let sockets close and the proxy's background writes settle before the next step.
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { steps };
}

type Leaving = { kind: DisconnectKind; afterMs: number; afterEvents: number; bodyShare: number };

/**
 * One client of the disconnect phase, on its own connection. Resolves with what happened:
 * 'dropped' when it left as planned, 'answered' when the whole answer came first, 'refused'
 * when the connection failed before it meant to leave, 'error' for any other failure.
 */
function leaveEarly(spec: RequestSpec, plan: Leaving): Promise<{ outcome: 'dropped' | 'answered' | 'refused' | 'error'; detail?: string }> {
  const url = new URL(spec.url);
  const body = Buffer.from(spec.body);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: 'dropped' | 'answered' | 'refused' | 'error', detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ outcome, detail });
    };
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent: false, headers: { ...spec.headers, 'content-length': body.length } }, (res) => {
      let events = 0;
      res.on('data', (chunk: Buffer) => {
        if (plan.kind !== 'midStream') return;
        events += chunk.toString('utf8').split('\n\n').length - 1;
        if (events >= plan.afterEvents) {
          finish('dropped');
          req.destroy();
        }
      });
      res.on('end', () => finish(res.statusCode === 200 ? 'answered' : 'error', `HTTP ${res.statusCode}`));
      res.on('error', () => undefined);
    });
    // Leaving is the plan; an error after that is the expected consequence, not a failure.
    req.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET' ? 'refused' : 'error', error.message));
    const leave = () => {
      finish('dropped');
      req.destroy();
    };
    let timer: NodeJS.Timeout | undefined;
    if (plan.kind === 'midUpload') {
      // Headers promise the whole body; only part of it is sent before the client goes.
      req.flushHeaders();
      req.write(body.subarray(0, Math.max(1, Math.floor(body.length * plan.bodyShare))));
      timer = setTimeout(leave, plan.afterMs);
      return;
    }
    req.end(body);
    // No client may hang a bounded run: a silent answer counts as an error after 30 s.
    const guard = () =>
      setTimeout(() => {
        finish('error', 'no answer within 30 s');
        req.destroy();
      }, 30_000);
    if (plan.kind === 'beforeHeaders') {
      timer = setTimeout(leave, plan.afterMs);
      req.once('response', () => {
        clearTimeout(timer);
        timer = guard();
      });
    } else timer = guard();
  });
}

async function runDisconnects(job: DisconnectJob): Promise<DisconnectResult> {
  const random = seededRandom(job.seed);
  const kinds: DisconnectKind[] = ['beforeHeaders', 'midStream', 'midUpload', 'complete'];
  const empty = (): DisconnectKindResult => ({ sent: 0, dropped: 0, answered: 0, errors: 0, refused: 0 });
  const byKind = Object.fromEntries(kinds.map((kind) => [kind, empty()])) as DisconnectResult['byKind'];
  // Plans are drawn up front, so the same seed gives the same clients whatever the timing.
  const plans: Leaving[] = Array.from({ length: job.count }, () => ({
    kind: kinds[Math.floor(random() * kinds.length)]!,
    afterMs: random() * job.maxDropDelayMs,
    afterEvents: 1 + Math.floor(random() * 5),
    bodyShare: random() * 0.9,
  }));
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      const entry = byKind[plan.kind];
      entry.sent++;
      const { outcome, detail } = await leaveEarly(plan.kind === 'midStream' ? job.stream : job.json, plan);
      if (outcome === 'dropped') entry.dropped++;
      else if (outcome === 'answered') entry.answered++;
      else if (outcome === 'refused') entry.refused++;
      else entry.errors++;
      if (outcome === 'refused' || outcome === 'error') entry.firstError ??= detail;
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  return { byKind };
}

process.on('message', (job: LoadJob) => {
  const work: Promise<LoadResult> = job.kind === 'latency' ? runLatency(job) : job.kind === 'throughput' ? runThroughput(job) : runDisconnects(job);
  work.then(
    (result) => process.send!({ ok: true, result }),
    (error: Error) => process.send!({ ok: false, error: error.stack ?? String(error) }),
  );
});
process.send?.({ ready: true });
