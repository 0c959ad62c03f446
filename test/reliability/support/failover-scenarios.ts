/**
 * The failover crash test's sixteen scenarios and their checks, as the public catalogue states
 * them (failoverbench, scenarios/catalogue.yaml, methodology v0.1), and its verdicts:
 *
 *   pass     rescued (the complete answer; for S13 a clean error), every check clean
 *   partial  rescued, an advisory check failed (or S13 answered by routing around the refusal)
 *   safe     not rescued, but a bounded clean error and every required check clean
 *   fail     a required check failed, a hang, or a truncated answer presented as success
 */
import type { AttemptSeen } from '../../fakes/fault-provider';

export type CheckKind =
  | 'no_hang'
  | 'complete'
  | 'no_truncated_success'
  | 'attempts_primary_min'
  | 'attempts_primary_max'
  | 'attempts_primary_eq'
  | 'first_gap_min_s'
  | 'max_attempts_within'
  | 'wall_max_s'
  | 'alive_after'
  | 'fallback_used'
  | 'reported_model_is_fallback'
  | 'usage_present'
  | 'no_prefill_masking'
  | 'seq_no_hang'
  | 'seq_served_during_outage'
  | 'seq_recovered_within_s'
  | 'seq_probe_discipline';

export interface Check {
  id: string;
  kind: CheckKind;
  value?: number;
  windowS?: number;
  advisory?: boolean;
  /** Not applicable to a run without fallbacks. */
  requiresFallback?: boolean;
  informational?: boolean;
}

export interface Scenario {
  id: string;
  title: string;
  model: string;
  fallbackModel?: string;
  /** The ideal outcome: the complete answer, or (S13) a clean error. */
  ideal?: 'error';
  maxWallS: number;
  sequence?: { count: number; intervalS: number; perRequestMaxWallS: number };
  /** The sequence of the catalogue's fast profile. */
  fastSequence?: { count: number; intervalS: number; perRequestMaxWallS: number };
  checks: Check[];
}

const noHang: Check = { id: 'no_hang', kind: 'no_hang' };

export const DEFAULT_FALLBACK = 'fb-ok';

export const SCENARIOS: Scenario[] = [
  {
    id: 'S01',
    title: '429 with Retry-After',
    model: 'fb-s01-429-retry-after',
    maxWallS: 20,
    checks: [
      { id: 'retried', kind: 'attempts_primary_min', value: 2, advisory: true },
      { id: 'retry_after_honoured', kind: 'first_gap_min_s', value: 1.8, advisory: true },
      { id: 'no_hammer', kind: 'max_attempts_within', windowS: 1.5, value: 2 },
    ],
  },
  {
    id: 'S02',
    title: '429 without Retry-After, persistent',
    model: 'fb-s02-429-persistent',
    maxWallS: 40,
    checks: [
      { id: 'no_hammer', kind: 'max_attempts_within', windowS: 3, value: 4 },
      { id: 'bounded_attempts', kind: 'attempts_primary_max', value: 6 },
      noHang,
    ],
  },
  {
    id: 'S03',
    title: '500 once, then healthy',
    model: 'fb-s03-500-then-200',
    maxWallS: 20,
    checks: [noHang, { id: 'same_provider_retry', kind: 'attempts_primary_min', value: 2, advisory: true }],
  },
  {
    id: 'S04',
    title: '503 persistent',
    model: 'fb-s04-503-persistent',
    maxWallS: 40,
    checks: [{ id: 'bounded_attempts', kind: 'attempts_primary_max', value: 6 }, noHang],
  },
  { id: 'S05', title: 'TCP reset before headers', model: 'fb-s05-reset', maxWallS: 20, checks: [noHang] },
  {
    id: 'S06',
    title: 'No response at all',
    model: 'fb-s06-no-response',
    maxWallS: 130,
    checks: [
      { id: 'within_budget', kind: 'wall_max_s', value: 100 },
      noHang,
      { id: 'silent_route_not_retried', kind: 'attempts_primary_max', value: 1, advisory: true },
    ],
  },
  {
    id: 'S07',
    title: 'Slow first token',
    model: 'fb-s07-slow-ttft',
    maxWallS: 60,
    checks: [noHang, { id: 'ttft_limit', kind: 'wall_max_s', value: 15, advisory: true, requiresFallback: true }],
  },
  {
    id: 'S08',
    title: 'Stream cut mid-answer',
    model: 'fb-s08-stream-cut',
    maxWallS: 40,
    checks: [{ id: 'no_truncated_success', kind: 'no_truncated_success' }, noHang],
  },
  {
    id: 'S09',
    title: 'Stream stalls',
    model: 'fb-s09-stream-stall',
    maxWallS: 70,
    checks: [
      { id: 'bounded', kind: 'wall_max_s', value: 45 },
      { id: 'no_truncated_success', kind: 'no_truncated_success' },
      { id: 'alive_after', kind: 'alive_after' },
      noHang,
    ],
  },
  {
    id: 'S10',
    title: 'Malformed chunk in the stream',
    model: 'fb-s10-malformed-chunk',
    maxWallS: 30,
    checks: [
      { id: 'alive_after', kind: 'alive_after' },
      { id: 'no_garbage', kind: 'no_truncated_success' },
      noHang,
      { id: 'recovered_in_place', kind: 'complete', advisory: true },
    ],
  },
  {
    id: 'S11',
    title: 'Stream ends without [DONE]',
    model: 'fb-s11-no-done',
    maxWallS: 30,
    checks: [
      { id: 'prompt_finalise', kind: 'wall_max_s', value: 8 },
      { id: 'usage_reported', kind: 'usage_present', advisory: true },
    ],
  },
  {
    id: 'S12',
    title: 'Context length exceeded',
    model: 'fb-s12-context-length',
    maxWallS: 20,
    checks: [{ id: 'no_same_model_retry', kind: 'attempts_primary_eq', value: 1 }, noHang],
  },
  {
    id: 'S13',
    title: 'Content-filter rejection',
    model: 'fb-s13-content-filter',
    ideal: 'error',
    maxWallS: 20,
    checks: [
      { id: 'no_same_model_retry', kind: 'attempts_primary_eq', value: 1 },
      noHang,
      { id: 'fallback_attempted', kind: 'fallback_used', advisory: true, informational: true },
    ],
  },
  {
    id: 'S14',
    title: 'Fallback target rejects prefill',
    model: 'fb-s14-stream-cut',
    fallbackModel: 'fb-ok-noprefill',
    maxWallS: 40,
    checks: [
      { id: 'no_prefill_masking', kind: 'no_prefill_masking' },
      { id: 'no_truncated_success', kind: 'no_truncated_success' },
    ],
  },
  {
    id: 'S15',
    title: 'Primary flaps: down, then healthy',
    model: 'fb-s15-flap',
    maxWallS: 200,
    sequence: { count: 20, intervalS: 4, perRequestMaxWallS: 30 },
    fastSequence: { count: 10, intervalS: 1.2, perRequestMaxWallS: 10 },
    checks: [
      { id: 'no_hang', kind: 'seq_no_hang' },
      { id: 'served_during_outage', kind: 'seq_served_during_outage', requiresFallback: true },
      { id: 'recovered', kind: 'seq_recovered_within_s', value: 30, requiresFallback: true },
      { id: 'probe_discipline', kind: 'seq_probe_discipline', advisory: true, informational: true },
    ],
  },
  {
    id: 'S16',
    title: 'Fail-over accounting',
    model: 'fb-s16-503-persistent',
    maxWallS: 40,
    checks: [
      { id: 'reports_fallback_model', kind: 'reported_model_is_fallback', requiresFallback: true },
      { id: 'usage_present', kind: 'usage_present', requiresFallback: true, advisory: true },
      { id: 'bounded_attempts', kind: 'attempts_primary_max', value: 6 },
    ],
  },
];

/** What the client got from one call. */
export interface ClientView {
  outcome: 'success' | 'error' | 'hang';
  content: string;
  error?: string;
  reportedModel?: string;
  usage?: unknown;
  elapsedS: number;
}

/** One request of a sequence scenario, with when it was sent. */
export interface SequenceItem extends ClientView {
  sentAtS: number;
}

/** Everything a verdict is made of: both views, and the alive probe after the scenario. */
export interface Measured {
  scenario: Scenario;
  withFallback: boolean;
  client: ClientView;
  log: AttemptSeen[];
  aliveAfter: boolean;
  sequence?: { items: SequenceItem[]; downS: number };
  canonical: string;
}

export type Verdict = 'pass' | 'partial' | 'safe' | 'fail';

export interface Scored {
  id: string;
  verdict: Verdict;
  reason: string;
  checks: Array<{ id: string; status: 'pass' | 'fail' | 'na' | 'info'; detail: string }>;
  /** Attempts on the primary / fallback model, and seconds the call took. */
  summary: string;
}

const normalised = (text: string) => text.replace(/\s+/g, ' ').trim();
const name = (model: string | undefined) => (model ?? '').split('/').pop()!.toLowerCase();

export function score(measured: Measured): Scored {
  const { scenario, client, log } = measured;
  const fallbackModel = scenario.fallbackModel ?? DEFAULT_FALLBACK;
  const primary = log.filter((entry) => name(entry.model) === name(scenario.model));
  const fallback = log.filter((entry) => name(entry.model) === name(fallbackModel));
  const complete = normalised(client.content) === normalised(measured.canonical);
  const items = measured.sequence?.items ?? [];
  const downS = measured.sequence?.downS ?? 0;

  const checks = scenario.checks.map((check) => {
    if (check.requiresFallback && !measured.withFallback)
      return { check, ok: undefined as boolean | undefined, detail: 'n/a: no fallback named' };
    const [ok, detail] = evaluate(check);
    return { check, ok, detail };
  });

  function evaluate(check: Check): [boolean | undefined, string] {
    const value = check.value ?? 0;
    switch (check.kind) {
      case 'no_hang':
        return [client.outcome !== 'hang', `ended in ${client.elapsedS.toFixed(1)} s (${client.outcome})`];
      case 'complete':
        return [client.outcome === 'success' && complete, complete ? 'complete answer' : client.outcome];
      case 'no_truncated_success':
        return [!(client.outcome === 'success' && !complete), client.outcome];
      case 'attempts_primary_min':
        return [primary.length >= value, `${primary.length} primary attempt(s)`];
      case 'attempts_primary_max':
        return [primary.length <= value, `${primary.length} primary attempt(s)`];
      case 'attempts_primary_eq':
        return [primary.length === value, `${primary.length} primary attempt(s)`];
      case 'first_gap_min_s': {
        const gap = primary.length >= 2 ? primary[1].t - primary[0].t : undefined;
        return [gap !== undefined && gap >= value, gap === undefined ? 'no second attempt' : `gap ${gap.toFixed(2)} s`];
      }
      case 'max_attempts_within': {
        const first = primary[0]?.t ?? 0;
        const within = primary.filter((entry) => entry.t - first < check.windowS!).length;
        return [within <= value, `${within} attempt(s) in the first ${check.windowS} s`];
      }
      case 'wall_max_s':
        return [client.outcome !== 'hang' && client.elapsedS <= value, `${client.elapsedS.toFixed(1)} s`];
      case 'alive_after':
        return [measured.aliveAfter, measured.aliveAfter ? 'healthy call answered afterwards' : 'healthy call failed'];
      case 'fallback_used':
        return [fallback.length >= 1, `${fallback.length} fallback attempt(s)`];
      case 'reported_model_is_fallback':
        if (fallback.length === 0) return [undefined, 'n/a: the fallback was never used'];
        return [name(client.reportedModel).includes(name(fallbackModel)), `model ${client.reportedModel}`];
      case 'usage_present':
        return [Boolean(client.usage), client.usage ? 'usage reported' : 'no usage'];
      case 'no_prefill_masking': {
        const rejections = log.filter((entry) => entry.action.startsWith('400 prefill')).length;
        return [
          !(client.outcome === 'error' && rejections > 0),
          `${rejections} prefill rejection(s), ${client.outcome}`,
        ];
      }
      case 'seq_no_hang': {
        const hangs = items.filter((item) => item.outcome === 'hang').length;
        return [hangs === 0, `${hangs} hung of ${items.length}`];
      }
      case 'seq_served_during_outage': {
        const during = items.filter((item) => item.sentAtS < downS);
        const served = during.filter((item) => item.outcome === 'success').length;
        return [during.length > 0 && served === during.length, `${served}/${during.length} answered in the outage`];
      }
      case 'seq_recovered_within_s': {
        const recovered = primary.filter((entry) => entry.action.startsWith('200')).map((entry) => entry.t);
        const after = recovered.length ? Math.min(...recovered) - downS : undefined;
        return [
          after !== undefined && after <= value,
          after === undefined ? 'primary never used again' : `primary answered ${after.toFixed(1)} s after recovery`,
        ];
      }
      case 'seq_probe_discipline': {
        const during = items.filter((item) => item.sentAtS < downS).length;
        const attempts = primary.filter((entry) => entry.t < downS).length;
        return [attempts <= during, `${attempts} primary attempt(s) for ${during} request(s) in the outage`];
      }
    }
  }

  const results = checks.map(({ check, ok, detail }) => ({
    id: check.id,
    status: (ok === undefined ? 'na' : ok ? 'pass' : check.informational ? 'info' : 'fail') as
      'pass' | 'fail' | 'na' | 'info',
    detail,
    advisory: check.advisory === true,
  }));
  const summary = `${primary.length}p/${fallback.length}f · ${client.elapsedS.toFixed(1)} s`;
  const done = (verdict: Verdict, reason: string): Scored => ({
    id: scenario.id,
    verdict,
    reason,
    checks: results.map(({ id, status, detail }) => ({ id, status, detail })),
    summary,
  });

  if (client.outcome === 'hang') return done('fail', 'hang');
  if (client.outcome === 'success' && !complete && scenario.ideal !== 'error')
    return done('fail', 'truncated answer presented as success');
  const failedRequired = results.filter((r) => r.status === 'fail' && !r.advisory).map((r) => r.id);
  if (failedRequired.length) return done('fail', `failed: ${failedRequired.join(', ')}`);
  const failedAdvisory = results.filter((r) => r.status === 'fail' && r.advisory).map((r) => r.id);
  let rescued: boolean;
  if (scenario.ideal === 'error') {
    if (client.outcome === 'success') return done('partial', 'answered by routing around the refusal');
    rescued = client.outcome === 'error';
  } else rescued = client.outcome === 'success' && complete;
  if (rescued)
    return failedAdvisory.length
      ? done('partial', `rescued; advisory: ${failedAdvisory.join(', ')}`)
      : done('pass', 'rescued');
  return done('safe', `not rescued, clean error: ${(client.error ?? '').slice(0, 80)}`);
}

export function tally(scored: Scored[]): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { pass: 0, partial: 0, safe: 0, fail: 0 };
  for (const { verdict } of scored) counts[verdict]++;
  return counts;
}
