/**
 * The load generator, forked by bench/run.ts as its own process so that its CPU is never counted as
 * a contender's. It runs one job at a time: closed-loop workers over node:http with keep-alive,
 * bounded by a request count or a duration, and sends back every request's timings.
 * Plain Node (no imports beyond node:), so it starts without a loader.
 */
import { Agent, request } from 'node:http';

export interface LoadJob {
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
  /** Requests to send (unless `durationMs` is set). */
  count: number;
  /** Send until this much time has passed instead of `count` requests. */
  durationMs?: number;
  /** Each worker waits this long after every answer. */
  pauseMs?: number;
  /** Read the upstream's write stamps from the SSE events. */
  stream?: boolean;
  /** A response header each answer must carry, e.g. x-proxy-cache: HIT. */
  expectHeader?: [string, string];
  /** Headers that vary per request: request i adds set i mod their number (e.g. one token per caller). */
  headerSets?: Array<Record<string, string>>;
}

export interface LoadResult {
  /** Request start to the last body byte, per answered request. */
  totalMs: number[];
  /** Request start to the first body byte. */
  firstByteMs: number[];
  /** Per SSE event: the upstream writing it to this process receiving it. */
  lagMs: number[];
  /** Per SSE event after a stream's first: time since the previous event arrived. */
  gapMs: number[];
  errors: number;
  firstError?: string;
  elapsedMs: number;
  /** With a duration: answered requests whose answer ended inside it (those sent near its end may finish after). */
  answeredInWindow?: number;
}

const STAMP = /"obfuscation":"t(\d+)"/g;

interface Outcome {
  ok: boolean;
  totalMs: number;
  firstByteMs: number;
  lagMs: number[];
  gapMs: number[];
  error?: string;
}

function send(job: LoadJob, url: URL, body: Buffer, agent: Agent, index: number): Promise<Outcome> {
  const started = performance.now();
  const outcome: Outcome = { ok: false, totalMs: 0, firstByteMs: 0, lagMs: [], gapMs: [] };
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        agent,
        headers: {
          ...job.headers,
          ...(job.headerSets ? job.headerSets[index % job.headerSets.length] : {}),
          'content-length': body.length,
        },
      },
      (res) => {
        let pending = '';
        let lastEvent: bigint | undefined;
        res.on('data', (chunk: Buffer) => {
          if (!outcome.firstByteMs) outcome.firstByteMs = performance.now() - started;
          if (!job.stream) return;
          const arrived = process.hrtime.bigint();
          pending += chunk.toString('utf8');
          const end = pending.lastIndexOf('\n\n');
          if (end < 0) return;
          for (const match of pending.slice(0, end).matchAll(STAMP)) {
            outcome.lagMs.push(Number(arrived - BigInt(match[1]!)) / 1e6);
            if (lastEvent !== undefined) outcome.gapMs.push(Number(arrived - lastEvent) / 1e6);
            lastEvent = arrived;
          }
          pending = pending.slice(end + 2);
        });
        res.on('end', () => {
          outcome.totalMs = performance.now() - started;
          const [name, value] = job.expectHeader ?? [];
          if (res.statusCode !== 200) outcome.error = `HTTP ${res.statusCode}`;
          else if (name && res.headers[name] !== value) outcome.error = `${name}: ${String(res.headers[name])}`;
          outcome.ok = outcome.error === undefined;
          resolve(outcome);
        });
        res.on('error', (error) => resolve({ ...outcome, error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ ...outcome, error: error.message }));
    // A bounded run: an answer that never comes is an error after 30 s.
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end(body);
  });
}

async function run(job: LoadJob): Promise<LoadResult> {
  const url = new URL(job.url);
  const body = Buffer.from(job.body);
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency });
  const result: LoadResult = { totalMs: [], firstByteMs: [], lagMs: [], gapMs: [], errors: 0, elapsedMs: 0 };
  const started = performance.now();
  const deadline = job.durationMs === undefined ? Infinity : started + job.durationMs;
  let issued = 0;
  const more = () => (job.durationMs === undefined ? issued < job.count : performance.now() < deadline);
  let inWindow = 0;
  const worker = async () => {
    while (more()) {
      const outcome = await send(job, url, body, agent, issued++);
      if (outcome.ok && performance.now() <= deadline) inWindow++;
      if (outcome.ok) {
        result.totalMs.push(outcome.totalMs);
        result.firstByteMs.push(outcome.firstByteMs);
        result.lagMs.push(...outcome.lagMs);
        result.gapMs.push(...outcome.gapMs);
      } else {
        result.errors++;
        result.firstError ??= outcome.error;
      }
      if (job.pauseMs) await new Promise((resolve) => setTimeout(resolve, job.pauseMs));
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  result.elapsedMs = performance.now() - started;
  if (job.durationMs !== undefined) result.answeredInWindow = inWindow;
  agent.destroy();
  return result;
}

process.on('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send!({ ok: true, result }),
    (error: Error) => process.send!({ ok: false, error: error.stack ?? String(error) }),
  );
});
process.send?.({ ready: true });
