import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import type { Usage } from '../../../lambda/providers/usage';
import { searchableSecrets } from '../../../lambda/streaming/redact';
import { buildRow, UNSTORABLE_USAGE, type RowFacts } from '../../../lambda/usage/build-row';
import { REQUESTER_MAX_CHARS } from '../../../lambda/usage/usage-row';

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
  secrets: [],
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
    const row = buildRow(
      facts(),
      { status: 200, model: 'claude-haiku-4-5-20251001', usage, cached: { savedNanos: 6_000_000 } },
      prices,
    );
    expect(row).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
      cost_nanos: 0,
      priced: true,
      cached: true,
      saved_nanos: 6_000_000,
      saved_usd: 0.006,
    });
  });

  it('an error counts no tokens, keeps the message, and is not "unpriced"', () => {
    const row = buildRow(
      facts({ requestedModel: 'no-such-model' }),
      { status: 502, usage, error: 'upstream closed' },
      prices,
    );
    expect(row).toMatchObject({
      input_tokens: 0,
      cost_nanos: 0,
      priced: true,
      status_code: 502,
      error: 'upstream closed',
      model: 'no-such-model',
    });
  });

  it('labels stay bounded: the model at 1024 characters, the error at 2000, the requester at 8192', () => {
    const row = buildRow(
      facts({ requestedModel: 42, requester: 'r'.repeat(9_000) }),
      { status: 500, error: 'e'.repeat(3_000) },
      prices,
    );
    expect(row.model).toBe('unknown');
    expect(row.error).toHaveLength(2_000);
    expect(row.requester).toHaveLength(8_192);
    const long = buildRow(facts({ requestedModel: 'm'.repeat(2_000) }), { status: 200 }, prices);
    expect(long.model).toHaveLength(1_024);
    expect(long.model.endsWith('…')).toBe(true);
    expect(long.priced).toBe(false);
  });
});

describe('buildRow: no credential of the request in any free-text field (SECURITY.md)', () => {
  const token = 'sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
  const secret = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
  const key = 'sk-ant-stored-key-0123456789abcdef';
  const secrets = searchableSecrets([token, secret, key, 'short']);

  it('the model, requester, tags and error lose every credential; the rest of each stays', () => {
    const row = buildRow(
      facts({
        secrets,
        requestedModel: `model-${token}`,
        requester: `alice ${secret}`,
        tags: { team: `t-${secret}`, [`k${secret.toLowerCase()}`]: 'v' },
      }),
      { status: 403, error: `refused: key ${key} and token ${token}` },
      prices,
    );
    const text = JSON.stringify(row);
    for (const value of [token, secret, key]) expect(text).not.toContain(value);
    expect(row).toMatchObject({
      model: 'model-[redacted]',
      requester: 'alice [redacted]',
      error: 'refused: key [redacted] and token [redacted]',
    });
    expect(row.tags).toEqual({ team: 't-[redacted]', [`k${secret.toLowerCase()}`]: 'v' });
  });

  it('a label is scrubbed before it is cut, so no first characters of a credential remain', () => {
    const requester = `${'x'.repeat(REQUESTER_MAX_CHARS - 5)}${token}`;
    const row = buildRow(facts({ secrets, requester }), { status: 200, usage }, prices);
    // Cut first, it would end in the token's first four characters, `sk-p…`.
    expect(row.requester!.slice(REQUESTER_MAX_CHARS - 10)).toBe('xxxxx[red…');
    expect(row.requester!.includes('sk-p')).toBe(false);
  });

  it('a row without any credential in it keeps its fields as they are', () => {
    const tags = { team: 'search' };
    const row = buildRow(facts({ secrets, tags }), { status: 500, error: 'upstream failed' }, prices);
    expect(row.tags).toBe(tags);
    expect(row).toMatchObject({ requester: 'alice', error: 'upstream failed', model: 'claude-haiku-4-5-20251001' });
  });

  describe('numbers a row cannot hold exactly (beyond 2^53 - 1) are not stored approximately', () => {
    const reported = (inputTokens: number): Usage => ({ ...usage, inputTokens, outputTokens: 0 });
    const rowFor = (inputTokens: number) =>
      buildRow(facts(), { status: 200, model: 'claude-haiku-4-5-20251001', usage: reported(inputTokens) }, prices);

    it('a cost up to 2^53 - 1 nano-dollars is kept to the nano-dollar (claude-haiku-4-5: 1,000 nano-dollars an input token)', () => {
      const row = rowFor(9_000_000_000_000);
      expect(row.input_tokens).toBe(9_000_000_000_000);
      expect(BigInt(row.cost_nanos)).toBe(9_000_000_000_000n * 1_000n);
      expect(row.error).toBeUndefined();
      expect(row.priced).toBe(true);
    });

    it.each([
      ['a count beyond 2^53 - 1 (1e20 tokens, as reported)', 1e20],
      ['a count of 2^53 + 1 tokens (read as 2^53, as JSON.parse reads it)', Number('9007199254740993')],
      ['a count under 2^53 whose cost is beyond it', 9_100_000_000_000],
    ])('%s: the row is written with 0 tokens and cost 0, unpriced, and says why', (_, inputTokens) => {
      const row = rowFor(inputTokens);
      expect(row).toMatchObject({
        status_code: 200,
        input_tokens: 0,
        output_tokens: 0,
        cost_nanos: 0,
        cost_usd: 0,
        priced: false,
        error: UNSTORABLE_USAGE,
      });
    });
  });
});
