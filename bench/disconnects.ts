/**
 * The disconnect phase: clients that leave mid-request — before the response headers, a few
 * events into a stream, halfway through sending their body — mixed with clients that stay.
 * Every contender gets a fresh process and the same seeded clients, in batches; between batches
 * the process is checked, and one that died is counted as a crash and started again (a few
 * times at most), so one crash does not hide the next. At the end: is it still up, does it
 * answer a normal request, and (this proxy) did every upstream call get its usage row.
 */
import type { BenchUpstream } from './fake-upstream';
import type { LoadClient } from './load-client';
import type { DisconnectKind, DisconnectKindResult, RequestSpec } from './load-protocol';
import type { Child } from './processes';

export interface DisconnectFigures {
  id: 'stored' | 'pipe' | 'portkey';
  label: string;
  clients: number;
  concurrency: number;
  byKind: Record<DisconnectKind, DisconnectKindResult>;
  /** Times the process was found dead between batches (and started again). */
  crashes: number;
  /** Clients sent before the first crash was seen (batch resolution). */
  firstCrashAfter?: number;
  /** How the first crash ended the process, and the last line it printed. */
  firstCrash?: string;
  /** Never crashed, alive at the end, and answered a normal request with 200. */
  survived: boolean;
  rssAfterMb?: number;
  /** This proxy: upstream calls since its last start, and the usage rows it wrote for them. */
  upstreamCalls?: number;
  rows?: number;
}

export interface DisconnectContender {
  id: DisconnectFigures['id'];
  label: string;
  start(): Promise<{ child: Child; spec(stream: boolean): RequestSpec; rows?(): Promise<number> }>;
}

export interface DisconnectOptions {
  clients: number;
  concurrency: number;
  batch: number;
  maxRestarts: number;
  /** Clients leaving before the headers do so at a random time up to this. */
  maxDropDelayMs: number;
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const KINDS: DisconnectKind[] = ['beforeHeaders', 'midStream', 'midUpload', 'complete'];

export async function disconnectPhase(
  load: LoadClient,
  upstream: BenchUpstream,
  contenders: DisconnectContender[],
  options: DisconnectOptions,
  rssOf: (pid: number) => number,
): Promise<DisconnectFigures[]> {
  const out: DisconnectFigures[] = [];
  for (const contender of contenders) {
    const byKind = Object.fromEntries(KINDS.map((kind) => [kind, { sent: 0, dropped: 0, answered: 0, errors: 0, refused: 0 }])) as DisconnectFigures['byKind'];
    const figures: DisconnectFigures = { id: contender.id, label: contender.label, clients: 0, concurrency: options.concurrency, byKind, crashes: 0, survived: false };
    let instance = await contender.start();
    upstream.startRecording();
    try {
      for (let batch = 0; figures.clients < options.clients; batch++) {
        const result = await load.disconnects({
          json: instance.spec(false),
          stream: instance.spec(true),
          count: Math.min(options.batch, options.clients - figures.clients),
          concurrency: options.concurrency,
          // The same seeds for every contender: they all meet the same clients.
          seed: 18_000 + batch,
          maxDropDelayMs: options.maxDropDelayMs,
        });
        for (const kind of KINDS) {
          const into = byKind[kind];
          const from = result.byKind[kind];
          into.sent += from.sent;
          into.dropped += from.dropped;
          into.answered += from.answered;
          into.errors += from.errors;
          into.refused += from.refused;
          into.firstError ??= from.firstError;
          figures.clients += from.sent;
        }
        // A process brought down by an unhandled error exits within moments of it.
        await settle(100);
        if (instance.child.alive()) continue;
        figures.crashes++;
        if (figures.firstCrashAfter === undefined) {
          figures.firstCrashAfter = figures.clients;
          figures.firstCrash = `exited (${instance.child.exit()}): ${crashLine(instance.child.output())}`;
        }
        process.stdout.write(`  ! ${contender.label} died after ${figures.clients} clients (${instance.child.exit()})\n`);
        if (figures.crashes > options.maxRestarts) break;
        await instance.child.stop();
        instance = await contender.start();
        upstream.startRecording();
      }
      // Let aborted upstream calls and their row writes finish before judging.
      await settle(500);
      figures.survived = figures.crashes === 0 && instance.child.alive() && (await answersNormally(instance.spec(false)));
      if (instance.child.alive()) figures.rssAfterMb = rssOf(instance.child.pid);
      if (instance.rows && instance.child.alive()) {
        figures.upstreamCalls = upstream.arrivals.length;
        figures.rows = await instance.rows();
      }
    } finally {
      upstream.stopRecording();
      await instance.child.stop();
    }
    out.push(figures);
    const dropped = KINDS.reduce((sum, kind) => sum + byKind[kind].dropped, 0);
    const rows = figures.rows !== undefined ? `, ${figures.rows} rows for ${figures.upstreamCalls} upstream calls` : '';
    process.stdout.write(
      `  ${contender.label.padEnd(42)} ${figures.clients} clients, ${dropped} left early, errors ${KINDS.map((k) => byKind[k].errors + byKind[k].refused).join('/')}, ` +
        `crashes ${figures.crashes}, ${figures.survived ? 'survived' : 'DID NOT SURVIVE'}${rows}\n`,
    );
  }
  return out;
}

/** The error line of a crashed Node process's output (Node prints its version last). */
function crashLine(output: string): string {
  const lines = output.trim().split('\n').filter((line) => line.trim() && !/^Node\.js v\d/.test(line));
  const error = [...lines].reverse().find((line) => /\b\w*Error\b|\berror\b/i.test(line) && !/^\s+at /.test(line));
  return (error ?? lines.pop() ?? '').trim().slice(0, 300);
}

async function answersNormally(spec: RequestSpec): Promise<boolean> {
  try {
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(10_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Counts an account's usage rows through the management API, waiting until the count stops
 * growing (rows are written after the answer, and a client that left may still be in flight).
 */
export async function countRows(baseUrl: string, token: string): Promise<number> {
  const countOnce = async () => {
    let total = 0;
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const query = new URLSearchParams({ limit: '500', ...(cursor ? { cursor } : {}) });
      const response = await fetch(`${baseUrl}/api/logs?${query}`, { headers: { authorization: `Bearer ${token}` } });
      if (!response.ok) throw new Error(`GET /api/logs: HTTP ${response.status}`);
      const body = (await response.json()) as { items: unknown[]; next_cursor?: string | null };
      total += body.items.length;
      if (!body.next_cursor) break;
      cursor = body.next_cursor;
    }
    return total;
  };
  let last = await countOnce();
  for (let stable = 0, tries = 0; stable < 3 && tries < 40; tries++) {
    await settle(250);
    const now = await countOnce();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}
