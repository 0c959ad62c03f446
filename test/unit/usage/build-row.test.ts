import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import type { Usage } from '../../../lambda/providers/usage';
import { buildRow, type RowFacts } from '../../../lambda/usage/build-row';

const prices = loadPriceTable();
const usage: Usage = { inputTokens: 1000, outputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 };
const facts = (over: Partial<RowFacts> = {}): RowFacts => ({
  accountId: 'acct',
  tokenId: 'tok',
  requestId: 'req-1',
  receivedAt: Date.parse('2026-11-21T13:05:00.000Z'),
  startedAt: performance.now(),
  provider: 'prov-a',
  kind: 'messages',
  billing: 'tokens',
  requestedModel: 'claude-haiku-4-5-20251001',
  requester: 'alice',
  tags: {},
  stream: false,
  mode: 'stored',
  ...over,
});

describe('buildRow: one usage row from what the pipeline learned and how the request ended', () => {
  it('an answered request carries its tokens and its integer price, with the price source', () => {
    const row = buildRow(facts(), { status: 200, model: 'claude-haiku-4-5-20251001', usage }, prices);
    expect(row).toMatchObject({
      account_id: 'acct',
      token_id: 'tok',
      id: 'req-1',
      ts: '2026-11-21T13:05:00.000Z',
      provider: 'prov-a',
      kind: 'messages',
      model: 'claude-haiku-4-5-20251001',
      input_tokens: 1000,
      output_tokens: 1000,
      cost_nanos: 6_000_000,
      cost_usd: 0.006,
      priced: true,
      requester: 'alice',
      status_code: 200,
      cached: false,
      saved_nanos: 0,
      stream: false,
      mode: 'stored',
    });
    expect(row.price_source).toMatch(/^genai-prices@/);
    expect(row.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a free endpoint costs 0 at a known price, whatever tokens it reports', () => {
    const row = buildRow(facts({ kind: 'count_tokens', billing: 'free' }), { status: 200, usage }, prices);
    expect(row).toMatchObject({ cost_nanos: 0, priced: true, model: 'claude-haiku-4-5-20251001' });
    expect(row.price_source).toBeUndefined();
  });

  it('a cache hit counts no tokens and no cost, and records what it saved', () => {
    const row = buildRow(facts(), { status: 200, model: 'claude-haiku-4-5-20251001', usage, cached: { savedNanos: 6_000_000 } }, prices);
    expect(row).toMatchObject({ input_tokens: 0, output_tokens: 0, cost_nanos: 0, priced: true, cached: true, saved_nanos: 6_000_000, saved_usd: 0.006 });
  });

  it('an error counts no tokens, keeps the message, and is not "unpriced"', () => {
    const row = buildRow(facts({ requestedModel: 'no-such-model' }), { status: 502, usage, error: 'upstream closed' }, prices);
    expect(row).toMatchObject({ input_tokens: 0, cost_nanos: 0, priced: true, status_code: 502, error: 'upstream closed', model: 'no-such-model' });
  });

  it('labels stay bounded: the model at 1024 characters, the error at 2000, the requester at 8192', () => {
    const row = buildRow(facts({ requestedModel: 42, requester: 'r'.repeat(9_000) }), { status: 500, error: 'e'.repeat(3_000) }, prices);
    expect(row.model).toBe('unknown');
    expect(row.error).toHaveLength(2_000);
    expect(row.requester).toHaveLength(8_192);
    const long = buildRow(facts({ requestedModel: 'm'.repeat(2_000) }), { status: 200 }, prices);
    expect(long.model).toHaveLength(1_024);
    expect(long.model.endsWith('…')).toBe(true);
    expect(long.priced).toBe(false);
  });
});
