import { join } from 'node:path';
import { build } from 'esbuild';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { startBenchUpstream, type BenchUpstream } from './fake-upstream';
import { JSON_SHAPE } from './phases';
import { ROOT } from './processes';

export interface Rig {
  /** The bare pipe proxy, built into `work`. */
  pipeScript: string;
  upstream: BenchUpstream;
  dynamo: { endpoint: string; stop(): Promise<void> };
}

/**
 * What a side-by-side measurement outside the full run starts with: the bare pipe's script, the
 * fake upstream answering JSON and a fresh DynamoDB Local. Each one's stop joins `cleanups`.
 */
export async function startRig(work: string, cleanups: Array<() => Promise<unknown>>): Promise<Rig> {
  const pipeScript = join(work, 'pipe-proxy.mjs');
  await build({ entryPoints: [join(ROOT, 'bench', 'pipe-proxy.ts')], outfile: pipeScript, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
  const upstream = await startBenchUpstream(JSON_SHAPE);
  cleanups.push(() => upstream.close());
  const dynamo = await startDynamoDbLocal();
  cleanups.push(() => dynamo.stop());
  return { pipeScript, upstream, dynamo };
}
