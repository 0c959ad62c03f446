/** The phases that need their own contender processes: store counting, the CPU profile, leaving clients. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContenders, type ContenderId } from './contenders';
import { countRows, disconnectPhase, type DisconnectContender, type DisconnectFigures, type DisconnectOptions } from './disconnects';
import type { BenchUpstream, UpstreamShape } from './fake-upstream';
import type { LoadClient } from './load-client';
import { JSON_SHAPE } from './phases';
import { memoryMb } from './process-stats';
import { ROOT, startPipeProxy, startPortkey, startProxyServer, type Child, type ProxyInstance } from './processes';
import { buildReadableServer, summariseProfile, type ProfileSummary } from './profile';
import { countRoundTrips, type RoundTripSummary } from './round-trips';
import type { StoreCounter } from './store-counter';

/** A different prompt per call, so each one misses the cache and writes an entry. */
function withSalt(body: string, salt: string): string {
  const json = JSON.parse(body) as { messages: Array<{ content: string }> };
  json.messages[json.messages.length - 1]!.content += ` #${salt}`;
  return JSON.stringify(json);
}

export async function measureRoundTrips(options: {
  upstream: BenchUpstream;
  counter: StoreCounter;
  countedProxy: ProxyInstance;
  pipe: Child;
  portkey: Child;
  iterations: { warmup: number; requests: number };
  counterDelayMs: number;
}): Promise<RoundTripSummary[]> {
  const { upstream, counter, countedProxy } = options;
  const specs = Object.fromEntries(buildContenders({ upstreamOrigin: upstream.origin, pipe: options.pipe, proxy: countedProxy, portkey: options.portkey }).map((c) => [c.id, c]));
  const prefix = countedProxy.tablePrefix;
  const modes = [
    { mode: 'stored key', spec: () => specs.stored!.spec(false) },
    { mode: 'pass-through', spec: () => specs.passThrough!.spec(false) },
    { mode: 'stored key, streaming', spec: () => specs.stored!.spec(true) },
    { mode: 'stored key, messages dialect', spec: () => specs.storedMessages!.spec(false) },
    {
      mode: 'cache miss (x-proxy-cache: true, new prompt)',
      spec: (i: number) => {
        const spec = specs.cacheHit!.spec(false);
        return { ...spec, body: withSalt(spec.body, `miss-${Date.now()}-${i}`), expectHeader: undefined };
      },
    },
    { mode: 'cache hit', spec: () => specs.cacheHit!.spec(false) },
  ];
  const out: RoundTripSummary[] = [];
  for (const { mode, spec } of modes) {
    const summary = await countRoundTrips({
      mode,
      spec,
      counter,
      upstream,
      ...options.iterations,
      counterDelayMs: options.counterDelayMs,
      tablePrefix: (table) => table.split('+').map((name) => (name.startsWith(prefix) ? name.slice(prefix.length) : name)).join('+'),
    });
    out.push(summary);
    process.stdout.write(`  ${mode.padEnd(46)} before upstream ${summary.callsBeforeUpstream} calls in ${summary.wavesBeforeUpstream} wave(s), after answer ${summary.callsAfterResponse}\n`);
  }
  return out;
}

export async function profileProxy(options: {
  upstream: BenchUpstream;
  dynamoEndpoint: string;
  load: LoadClient;
  pipe: Child;
  portkey: Child;
}): Promise<ProfileSummary & { load: string }> {
  process.stdout.write('profiling the proxy (unminified build, --cpu-prof)…\n');
  const bundle = await buildReadableServer(ROOT);
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-cpuprof-'));
  const proxy = await startProxyServer({
    upstreamOrigin: options.upstream.origin,
    dynamoEndpoint: options.dynamoEndpoint,
    entry: bundle,
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    name: 'proxy (profiled)',
  });
  const spec = buildContenders({ upstreamOrigin: options.upstream.origin, pipe: options.pipe, proxy, portkey: options.portkey })
    .find((c) => c.id === 'stored')!
    .spec(false);
  const warmup = 200;
  const count = 3000;
  try {
    await options.load.latency({ spec, concurrency: 16, warmup, count });
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    // The profile is written as the process exits.
    await proxy.stop();
  }
  try {
    return { ...summariseProfile(profileDir, bundle), load: `${warmup + count} stored-key chat requests at c=16 (start-up included)` };
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
    rmSync(join(bundle, '..'), { recursive: true, force: true });
  }
}

/** Fresh processes of this proxy, the bare pipe and Portkey meet the same seeded leaving clients. */
export async function runDisconnects(parts: {
  load: LoadClient;
  upstream: BenchUpstream;
  dynamoEndpoint: string;
  serverBundle: string;
  pipeScript: string;
  pipe: Child;
  portkey: Child;
  only?: ContenderId[];
  shape: UpstreamShape;
  options: DisconnectOptions;
}): Promise<DisconnectFigures[]> {
  const { upstream } = parts;
  const specOf = (id: ContenderId, proxy: ProxyInstance | undefined, pipe: Child, portkey: Child) => {
    const placeholder = { url: 'http://127.0.0.1:1', token: '' } as ProxyInstance;
    return buildContenders({ upstreamOrigin: upstream.origin, pipe, proxy: proxy ?? placeholder, portkey }).find((c) => c.id === id)!.spec;
  };
  const candidates: DisconnectContender[] = [
    {
      id: 'stored',
      label: 'this proxy, stored key',
      async start() {
        const proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: parts.dynamoEndpoint, entry: parts.serverBundle, name: 'proxy (disconnects)' });
        return { child: proxy, spec: specOf('stored', proxy, parts.pipe, parts.portkey), rows: () => countRows(proxy.url, proxy.token) };
      },
    },
    {
      id: 'pipe',
      label: 'bare Node pipe proxy',
      async start() {
        const pipe = await startPipeProxy(parts.pipeScript, upstream.origin);
        return { child: pipe, spec: specOf('pipe', undefined, pipe, parts.portkey) };
      },
    },
    {
      id: 'portkey',
      label: 'Portkey gateway, pass-through',
      async start() {
        const portkey = await startPortkey();
        return { child: portkey, spec: specOf('portkey', undefined, parts.pipe, portkey) };
      },
    },
  ];
  upstream.setShape(parts.shape);
  try {
    return await disconnectPhase(parts.load, upstream, candidates.filter((c) => !parts.only || parts.only.includes(c.id)), parts.options, (pid) => memoryMb(pid).rss);
  } finally {
    upstream.setShape(JSON_SHAPE);
  }
}
