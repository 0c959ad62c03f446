import { providerById } from '../../../lambda/providers/registry';
import {
  DEFAULT_FIRST_TOKEN_MS,
  DEFAULT_STALL_MS,
  planFailover,
  type Target,
} from '../../../lambda/upstream/fallbacks';
import { retryAfterMs } from '../../../lambda/upstream/retry-after';

function primary(providerId: string, kind: string, model = 'gpt-4o'): Target {
  const provider = providerById(providerId)!;
  const endpoint = provider.endpoints.find((candidate) => candidate.kind === kind)!;
  return { provider, endpoint, model, upstreamPath: endpoint.path };
}

describe('planFailover (x-proxy-fallback)', () => {
  it('no header: the model asked for alone, with the default limits', () => {
    const planned = planFailover({ headers: {}, primary: primary('prov-b', 'chat'), mode: 'stored' });
    expect(planned).toEqual({
      ok: true,
      plan: {
        targets: [expect.objectContaining({ model: 'gpt-4o' })],
        firstTokenMs: DEFAULT_FIRST_TOKEN_MS,
        stallMs: DEFAULT_STALL_MS,
      },
    });
  });

  it('models of the same provider and of another provider of the same API shape, in order', () => {
    const planned = planFailover({
      headers: { 'x-proxy-fallback': 'gpt-4o-mini, prov-d/mistral-small-latest', 'x-proxy-stall-timeout': '2.5' },
      primary: primary('prov-b', 'chat'),
      mode: 'stored',
    });
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.plan.targets.map((t) => `${t.provider.id}/${t.model}${t.upstreamPath}`)).toEqual([
      'prov-b/gpt-4o/chat/completions',
      'prov-b/gpt-4o-mini/chat/completions',
      'prov-d/mistral-small-latest/chat/completions',
    ]);
    expect(planned.plan.stallMs).toBe(2_500);
  });

  it('a model whose name has a slash but no provider before it stays on the same provider', () => {
    const planned = planFailover({
      headers: { 'x-proxy-fallback': 'meta-llama/llama-3.3-70b' },
      primary: primary('prov-e', 'chat'),
      mode: 'stored',
    });
    expect(planned.ok && planned.plan.targets[1]).toMatchObject({ model: 'meta-llama/llama-3.3-70b' });
  });

  it.each([
    ['prov-a/claude-sonnet-4-6', 'stored', /same API shape/],
    ['prov-d/mistral-small-latest', 'pass-through', /same provider/],
    ['a, , b', 'stored', /empty/],
    ['a, b, c, d', 'stored', /at most 3/],
    ['prov-c/', 'stored', /no model/],
  ] as const)('refuses %s (%s mode)', (header, mode, message) => {
    const planned = planFailover({ headers: { 'x-proxy-fallback': header }, primary: primary('prov-b', 'chat'), mode });
    expect(planned).toMatchObject({ ok: false, param: 'x-proxy-fallback', message: expect.stringMatching(message) });
  });

  it('refuses limits out of range or not numbers', () => {
    for (const value of ['0', '301', 'soon', '-3'])
      expect(
        planFailover({
          headers: { 'x-proxy-first-token-timeout': value },
          primary: primary('prov-b', 'chat'),
          mode: 'stored',
        }),
      ).toMatchObject({ ok: false, param: 'x-proxy-first-token-timeout' });
  });

  it('Bedrock: another model id, inference profile or ARN, on its own path, on the endpoint asked for', () => {
    const provider = providerById('bedrock')!;
    const endpoint = provider.endpoints.find((candidate) => candidate.path === '/model/{model}/converse-stream')!;
    const model = 'us.anthropic.claude-sonnet-4-6';
    const arn = 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6';
    const planned = planFailover({
      headers: { 'x-proxy-fallback': `eu.anthropic.claude-sonnet-4-6, bedrock/${arn}` },
      primary: { provider, endpoint, model, upstreamPath: `/model/${model}/converse-stream` },
      mode: 'stored',
    });
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.plan.targets.map((t) => t.upstreamPath)).toEqual([
      `/model/${model}/converse-stream`,
      '/model/eu.anthropic.claude-sonnet-4-6/converse-stream',
      `/model/${encodeURIComponent(arn)}/converse-stream`,
    ]);
  });

  it('refuses fallbacks where the body names no model', () => {
    const planned = planFailover({
      headers: { 'x-proxy-fallback': 'x' },
      primary: primary('prov-b', 'models', ''),
      mode: 'stored',
    });
    expect(planned).toMatchObject({ ok: false });
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates; nothing else', () => {
    const now = Date.parse('2026-11-29T10:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs(['7'], now)).toBe(7_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 10:00:03 GMT', now)).toBe(3_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('1.5', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});
