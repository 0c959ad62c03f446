import { formatTags, joinTags, parseTagHeader } from '../../../lambda/tags/tags';
import { modelAllowed } from '../../../lambda/auth/token-limits';

describe('x-proxy-tags (docs/tags.md)', () => {
  it.each<[string | undefined, Record<string, string>]>([
    [undefined, {}],
    ['  ', {}],
    ['team=search, feature=autocomplete', { team: 'search', feature: 'autocomplete' }],
    ['  team = search  ,feature=a b', { team: 'search', feature: 'a b' }],
    ['query=a=b', { query: 'a=b' }],
    ['k.1_-=~!@#$%^&*()', { 'k.1_-': '~!@#$%^&*()' }],
    [
      Array.from({ length: 10 }, (_, i) => `k${i}=v`).join(','),
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'v'])),
    ],
  ])('%j is read as %j', (header, tags) => {
    expect(parseTagHeader(header)).toEqual({ ok: true, tags });
  });

  it.each<[string, string]>([
    ['team', 'x-proxy-tags: "team" is not a key=value pair (pairs are separated by commas).'],
    ['team=search,', 'x-proxy-tags: "" is not a key=value pair (pairs are separated by commas).'],
    ['=search', 'x-proxy-tags: a tag key is empty.'],
    ['Team=search', 'x-proxy-tags: tag key "Team" must be 1 to 40 lowercase letters, digits, "_", "-" or ".".'],
    [
      `${'k'.repeat(41)}=v`,
      `x-proxy-tags: tag key "${'k'.repeat(41)}" must be 1 to 40 lowercase letters, digits, "_", "-" or ".".`,
    ],
    ['team=', 'x-proxy-tags: tag "team" has an empty value.'],
    [`team=${'v'.repeat(101)}`, 'x-proxy-tags: the value of tag "team" is longer than 100 characters.'],
    ['team=caf\u00e9', 'x-proxy-tags: the value of tag "team" must be printable ASCII characters other than ",".'],
    ['team=a\tb', 'x-proxy-tags: the value of tag "team" must be printable ASCII characters other than ",".'],
    ['team=(other)', "x-proxy-tags: the value (other) is reserved (stats use it for values past a key's limit)."],
    ['team=a,team=b', 'x-proxy-tags: tag "team" is given twice.'],
    [Array.from({ length: 11 }, (_, i) => `k${i}=v`).join(','), 'x-proxy-tags: at most 10 tags, got 11.'],
  ])('%j is refused', (header, message) => {
    expect(parseTagHeader(header)).toEqual({ ok: false, message });
  });

  it("joins a request's tags with its token's, which no request may override", () => {
    expect(joinTags({ team: 'search' }, { feature: 'x' })).toEqual({ tags: { team: 'search', feature: 'x' } });
    expect(joinTags(undefined, { feature: 'x' })).toEqual({ tags: { feature: 'x' } });
    expect(joinTags({ team: 'search' }, { team: 'search' })).toEqual({ conflict: 'team' });
  });

  it('formats tags as the header does, keys sorted', () => {
    expect(formatTags({ team: 'search', feature: 'a=b' })).toBe('feature=a=b,team=search');
    expect(formatTags(undefined)).toBe('');
  });
});

describe('a token model list (docs/tags.md, "Per-token limits")', () => {
  const limits = { models: ['claude-haiku-', 'gpt-4.1-mini'] };
  it.each<[string, unknown, boolean]>([
    ['messages', 'claude-haiku-4-5-20251001', true],
    ['chat', 'gpt-4.1-mini', true],
    ['chat', 'gpt-4.1-mini-2025-04-14', true],
    ['messages', 'claude-opus-4-6', false],
    ['chat', 'gpt-4.1', false],
    ['other', undefined, false],
    ['models', undefined, true],
    ['count_tokens', 'claude-opus-4-6', true],
  ])('%s for %j: allowed %s', (kind, model, allowed) => {
    expect(modelAllowed(limits, kind, model)).toBe(allowed);
  });
  it('a token without a list may call anything', () => {
    expect(modelAllowed({}, 'chat', 'gpt-5')).toBe(true);
    expect(modelAllowed(undefined, 'other', undefined)).toBe(true);
  });
});
