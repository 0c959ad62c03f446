/**
 * Which fallbacks and limits a request gets (docs/fallbacks.md, "Defaults"): the header, then the
 * token's defaults for its model, then the account's; `x-proxy-fallback: none` turns the defaults
 * off; the request's limit headers override the account's limits. And the checks a saved default
 * must pass.
 */
import { providerById } from '../../../lambda/providers/registry';
import {
  DEFAULT_FIRST_TOKEN_MS,
  DEFAULT_STALL_MS,
  planFailover,
  savedFallbacksProblem,
  type FailoverDefaults,
  type Target,
} from '../../../lambda/upstream/fallbacks';

function primary(providerId: string, kind: string, model = 'gpt-4o'): Target {
  const provider = providerById(providerId)!;
  const endpoint = provider.endpoints.find((candidate) => candidate.kind === kind)!;
  return { provider, endpoint, model, upstreamPath: endpoint.path };
}

const DEFAULTS: FailoverDefaults = {
  token: ['gpt-4.1-mini'],
  account: ['gpt-4o-mini', 'prov-d/mistral-small-latest'],
  firstTokenMs: 3_000,
  stallMs: 4_000,
};

function plan(headers: Record<string, string>, defaults: FailoverDefaults = DEFAULTS, kind = 'chat') {
  const planned = planFailover({ headers, primary: primary('prov-b', kind), mode: 'stored', defaults });
  if (!planned.ok) throw new Error(planned.message);
  return {
    targets: planned.plan.targets.map((target) => `${target.provider.id}/${target.model}`),
    firstTokenMs: planned.plan.firstTokenMs,
    stallMs: planned.plan.stallMs,
  };
}

describe('default fallbacks: precedence', () => {
  it.each([
    ['the header wins over both defaults', { 'x-proxy-fallback': 'gpt-4.1' }, DEFAULTS, ['prov-b/gpt-4.1']],
    ["the token's defaults win over the account's", {}, DEFAULTS, ['prov-b/gpt-4.1-mini']],
    [
      "the account's defaults when the token has none for the model",
      {},
      { ...DEFAULTS, token: undefined },
      ['prov-b/gpt-4o-mini', 'prov-d/mistral-small-latest'],
    ],
    ['an empty header is no header', { 'x-proxy-fallback': ' ' }, DEFAULTS, ['prov-b/gpt-4.1-mini']],
    ['`none` turns the defaults off', { 'x-proxy-fallback': 'none' }, DEFAULTS, []],
    ['`None` too, in any case', { 'x-proxy-fallback': ' None ' }, DEFAULTS, []],
    ['no defaults and no header: the model alone', {}, {}, []],
  ] as const)('%s', (_name, headers, defaults, fallbacks) => {
    expect(plan(headers, defaults).targets).toEqual(['prov-b/gpt-4o', ...fallbacks]);
  });

  it("the account's limits apply unless the request sets its own; without either, the defaults", () => {
    expect(plan({})).toMatchObject({ firstTokenMs: 3_000, stallMs: 4_000 });
    expect(plan({ 'x-proxy-first-token-timeout': '20', 'x-proxy-stall-timeout': '1.5' })).toMatchObject({
      firstTokenMs: 20_000,
      stallMs: 1_500,
    });
    expect(plan({}, {})).toMatchObject({ firstTokenMs: DEFAULT_FIRST_TOKEN_MS, stallMs: DEFAULT_STALL_MS });
  });

  it('defaults are left out, not refused, for a request that cannot fall back; a header asking for it is refused', () => {
    expect(plan({}, DEFAULTS, 'models').targets).toEqual(['prov-b/gpt-4o']);
    const refused = planFailover({
      headers: { 'x-proxy-fallback': 'gpt-4o-mini' },
      primary: primary('prov-b', 'models', ''),
      mode: 'stored',
      defaults: DEFAULTS,
    });
    expect(refused).toMatchObject({ ok: false, param: 'x-proxy-fallback' });
  });

  it('a default that cannot serve this request is refused like the header, naming where it came from', () => {
    const planned = planFailover({
      headers: {},
      primary: primary('prov-b', 'chat'),
      mode: 'pass-through',
      defaults: { account: ['prov-d/mistral-small-latest'] },
    });
    expect(planned).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^The account's default fallbacks: .*same provider/),
    });
  });
});

describe('savedFallbacksProblem (checked when a default is saved)', () => {
  it.each([
    ['prov-b', ['gpt-4o-mini', 'prov-d/mistral-small-latest', 'prov-e/llama-3.3-70b-versatile']],
    ['prov-a', ['claude-sonnet-4-5']],
    ['prov-e', ['meta-llama/llama-4-scout-17b-16e-instruct']],
  ])('accepts %s %j', (provider, entries) => {
    expect(savedFallbacksProblem(provider, entries)).toBeUndefined();
  });

  it.each([
    ['prov-z', ['gpt-4o-mini'], /unknown provider/],
    ['prov-b', ['prov-a/claude-sonnet-4-5'], /same API shape/],
    ['prov-a', ['prov-b/gpt-4o'], /same API shape/],
    ['prov-b', ['a', 'b', 'c', 'd'], /1 to 3/],
    ['prov-b', [], /1 to 3/],
    ['prov-b', ['prov-d/'], /no model/],
    ['prov-b', ['a,b'], /comma/],
  ])('refuses %s %j', (provider, entries, message) => {
    expect(savedFallbacksProblem(provider, entries)).toMatch(message);
  });
});
