/**
 * The failover crash test, after the public catalogue of failoverbench (scenarios/catalogue.yaml,
 * methodology v0.1): sixteen faults injected by a fake OpenAI-compatible provider on provider B,
 * each scored pass / partial / safe / fail from what the client got and what the provider saw.
 * Every scenario runs at once through one local server, twice (with `x-proxy-fallback` naming the
 * catalogue's fallback model, and without any fallback), each under its own run so the logs stay apart.
 *
 * At the catalogue's full timings (the published profile) by default; FAILOVER_PROFILE=fast
 * shortens the waits for a quick local look.
 */
import { startFaultProvider, CANONICAL_ANSWER, FAULT_PROFILES, type FaultProvider } from '../fakes/fault-provider';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { chatCall } from './support/failover-client';
import {
  DEFAULT_FALLBACK,
  SCENARIOS,
  score,
  tally,
  type ClientView,
  type Scenario,
  type Scored,
  type SequenceItem,
} from './support/failover-scenarios';

const PROFILE = process.env.FAILOVER_PROFILE === 'fast' ? 'fast' : 'full';
const PROMPT = 'In sixty words: when does a gateway in front of a model provider earn its keep?';

let fault: FaultProvider;
let proxy: ProxyServer;

beforeAll(async () => {
  fault = await startFaultProvider(FAULT_PROFILES[PROFILE]);
  proxy = await startProxy({
    env: { UPSTREAM_BASE_URL_PROV_B: fault.baseUrl, RATE_LIMIT_PER_MINUTE: '10000' },
  });
});
afterAll(async () => {
  await proxy?.stop();
  await fault?.close();
});

async function runScenario(scenario: Scenario, run: string, withFallback: boolean): Promise<Scored> {
  const fallbackModel = scenario.fallbackModel ?? DEFAULT_FALLBACK;
  const call = (model: string, maxWallS: number, stream = true): Promise<ClientView> =>
    chatCall({
      url: `${proxy.proxyBase}/prov-b/v1/chat/completions`,
      token: proxy.account.token,
      model,
      prompt: PROMPT,
      stream,
      maxWallS,
      headers: { 'x-fb-run': run, ...(withFallback ? { 'x-proxy-fallback': fallbackModel } : {}) },
    });
  fault.reset(run);
  let client: ClientView;
  let sequence: { items: SequenceItem[]; downS: number } | undefined;
  const sequenceOf = PROFILE === 'fast' ? (scenario.fastSequence ?? scenario.sequence) : scenario.sequence;
  if (sequenceOf) {
    const { count, intervalS, perRequestMaxWallS } = sequenceOf;
    const started = performance.now();
    const items: SequenceItem[] = [];
    for (let i = 0; i < count; i++) {
      const wait = started + i * intervalS * 1000 - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const sentAtS = (performance.now() - started) / 1000;
      items.push({ ...(await call(scenario.model, perRequestMaxWallS)), sentAtS });
    }
    const last = items[items.length - 1];
    client = {
      ...last,
      outcome: items.some((item) => item.outcome === 'hang')
        ? 'hang'
        : items.every((item) => item.outcome === 'success')
          ? 'success'
          : 'error',
      content: items.every((item) => item.content.trim() === CANONICAL_ANSWER) ? CANONICAL_ANSWER : '',
      elapsedS: (performance.now() - started) / 1000,
    };
    sequence = { items, downS: fault.timings.flapDownS };
  } else client = await call(scenario.model, scenario.maxWallS);
  const log = fault.log(run);
  // The alive probe: one healthy call through the same proxy right after.
  const probe = await call('fb-ok', 10, false);
  return score({
    scenario,
    withFallback,
    client,
    log,
    aliveAfter: probe.outcome === 'success' && probe.content === CANONICAL_ANSWER,
    sequence,
    canonical: CANONICAL_ANSWER,
  });
}

/** Every scenario at once, each under its own run so the provider keeps its log, counts and clock apart. */
function runAll(run: string, withFallback: boolean): Promise<Scored[]> {
  return Promise.all(SCENARIOS.map((scenario) => runScenario(scenario, `${run}:${scenario.id}`, withFallback)));
}

function card(title: string, scored: Scored[]): string {
  const counts = tally(scored);
  const lines = scored.map(
    (s) =>
      `${s.id} ${s.verdict.padEnd(7)} ${s.summary.padEnd(20)} ${s.reason}` +
      s.checks
        .filter((check) => check.status !== 'pass')
        .map((check) => `\n      ${check.id}: ${check.status} (${check.detail})`)
        .join(''),
  );
  return `${title} (${PROFILE} profile): ${counts.pass} pass, ${counts.partial} partial, ${counts.safe} safe, ${counts.fail} fail\n${lines.join('\n')}`;
}

test(
  'the sixteen faults: with x-proxy-fallback every scenario is rescued; without one, none fails',
  async () => {
    const [withFallback, without] = await Promise.all([runAll('with-fallback', true), runAll('no-fallback', false)]);
    console.log(`${card('With x-proxy-fallback', withFallback)}\n\n${card('Without a fallback', without)}`);

    const rescued = tally(withFallback);
    expect(rescued.fail).toBe(0);
    expect(rescued.partial).toBe(0);
    // Sixteen passes, or fifteen with S14 ending as the catalogue's clean error.
    const notPassed = withFallback.filter((s) => s.verdict !== 'pass').map((s) => `${s.id} ${s.verdict}`);
    expect(notPassed.filter((s) => s !== 'S14 safe')).toEqual([]);

    const plain = tally(without);
    expect(plain.fail).toBe(0);
    expect(plain.pass).toBeGreaterThanOrEqual(5);
  },
  15 * 60_000,
);
