/** The orchestrator's handle on the load generator process. */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { DisconnectJob, DisconnectResult, LatencyJob, LatencyResult, ThroughputJob, ThroughputResult } from './load-protocol';

type Reply = { ready: true } | { ok: true; result: unknown } | { ok: false; error: string };

export interface LoadClient {
  latency(job: Omit<LatencyJob, 'kind'>): Promise<LatencyResult>;
  throughput(job: Omit<ThroughputJob, 'kind'>): Promise<ThroughputResult>;
  disconnects(job: Omit<DisconnectJob, 'kind'>): Promise<DisconnectResult>;
  pid: number;
  stop(): Promise<void>;
}

export async function startLoadClient(root: string): Promise<LoadClient> {
  const child: ChildProcess = fork(join(root, 'bench', 'load-generator.ts'), [], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('load generator did not start')), 30_000);
    child.once('message', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
  });

  // One job at a time: the orchestrator awaits each before sending the next.
  const run = <T>(job: LatencyJob | ThroughputJob | DisconnectJob): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load generator exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (reply: Reply) => {
        child.off('exit', onExit);
        if ('ok' in reply && reply.ok) resolve(reply.result as T);
        else reject(new Error('error' in reply ? reply.error : 'unexpected reply'));
      });
      child.send(job);
    });

  return {
    pid: child.pid!,
    latency: (job) => run<LatencyResult>({ kind: 'latency', ...job }),
    throughput: (job) => run<ThroughputResult>({ kind: 'throughput', ...job }),
    disconnects: (job) => run<DisconnectResult>({ kind: 'disconnect', ...job }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
