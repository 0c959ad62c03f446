import { cacheKey } from '../../../lambda/cache/cache-key';
import { cacheHeaderProblem, readCacheRequest, type CacheRequestInput } from '../../../lambda/cache/cache-request';
import { DEFAULT_CACHE_TTL_SECONDS } from '../../../lambda/cache/cache-ttl';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { passthroughDialect } from '../../../lambda/providers/dialects/passthrough';
import { responsesDialect } from '../../../lambda/providers/dialects/responses';

const BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function read(overrides: Partial<CacheRequestInput> = {}) {
  return readCacheRequest({
    headers: { 'x-proxy-cache': 'true' },
    accountId: 'acc-1',
    provider: 'prov-b',
    dialect: chatDialect,
    body: BODY,
    ...overrides,
  });
}

describe('readCacheRequest: what a request asks of the cache', () => {
  it('a cacheable request gets the key of its account, provider and endpoint kind', () => {
    expect(read()).toEqual({
      mode: 'read-write',
      bypass: false,
      key: cacheKey({ accountId: 'acc-1', provider: 'prov-b', kind: 'chat', body: BODY }),
      ttlSeconds: DEFAULT_CACHE_TTL_SECONDS,
    });
  });

  it.each([
    ['the header is absent', { headers: {} }, 'off'],
    ['the header is false', { headers: { 'x-proxy-cache': 'false' } }, 'off'],
    ['no proxy token names the account', { accountId: undefined }, 'read-write'],
    ['the body is not a valid JSON object', { body: undefined }, 'read-write'],
    ['the endpoint has no cache namespace', { dialect: passthroughDialect(chatDialect, 'tokens') }, 'read-write'],
    [
      'the answer depends on state the provider keeps',
      { dialect: responsesDialect, body: { model: 'gpt-4o-mini', input: 'hi', previous_response_id: 'resp_1' } },
      'read-write',
    ],
    [
      'the answer depends on a conversation the provider keeps',
      { dialect: responsesDialect, body: { model: 'gpt-4o-mini', input: 'hi', conversation: 'conv_1' } },
      'read-write',
    ],
  ] as const)('no key when %s', (_label, overrides, mode) => {
    const request = read(overrides as Partial<CacheRequestInput>);
    expect(request.mode).toBe(mode);
    expect(request.key).toBeUndefined();
  });

  it('only a request whose answer depends on provider state is a bypass', () => {
    expect(
      read({ dialect: responsesDialect, body: { model: 'm', input: 'hi', conversation: { id: 'conv_1' } } }).bypass,
    ).toBe(true);
    expect(
      read({ dialect: responsesDialect, body: { model: 'm', input: 'hi', previous_response_id: 'resp_1' } }).bypass,
    ).toBe(true);
    expect(read({ dialect: responsesDialect, body: { model: 'm', input: 'hi' } }).bypass).toBe(false);
    expect(
      read({ headers: {}, dialect: responsesDialect, body: { model: 'm', input: 'hi', conversation: 'conv_1' } })
        .bypass,
    ).toBe(false);
  });

  it('refresh has a key too (it writes), and Cache-Control max-age sets the lifetime', () => {
    const request = read({ headers: { 'x-proxy-cache': 'refresh', 'cache-control': 'max-age=60' } });
    expect(request).toMatchObject({ mode: 'refresh', ttlSeconds: 60 });
    expect(request.key).toBe(read().key);
  });

  it('an unreadable value turns the cache off and becomes a 400 on the header, quoting at most 40 characters', () => {
    const value = `yes${'x'.repeat(100)}`;
    const request = read({ headers: { 'x-proxy-cache': value } });
    expect(request).toMatchObject({ mode: 'off', invalidValue: value, key: undefined });
    expect(cacheHeaderProblem(request)).toEqual({
      param: 'x-proxy-cache',
      message: `x-proxy-cache must be "true", "refresh" or "false", not "${value.slice(0, 40)}".`,
    });
    expect(cacheHeaderProblem(read())).toBeUndefined();
  });
});
