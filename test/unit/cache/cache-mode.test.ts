import { isInvalidCacheMode, parseCacheMode } from '../../../lambda/cache/cache-mode';

describe('parseCacheMode (x-proxy-cache)', () => {
  it.each([
    [undefined, 'off'],
    ['false', 'off'],
    ['true', 'read-write'],
    ['refresh', 'refresh'],
    [' TRUE ', 'read-write'],
    ['Refresh', 'refresh'],
    ['\tFalse', 'off'],
  ])('%p → %p', (header, mode) => {
    expect(parseCacheMode(header)).toBe(mode);
  });

  it.each(['', 'yes', '1', 'on', 'true,refresh', 'read-write', 'no-cache'])(
    'rejects %p, keeping the value for the error message',
    (header) => {
      const mode = parseCacheMode(header);
      expect(mode).toEqual({ invalid: header });
      expect(isInvalidCacheMode(mode)).toBe(true);
    },
  );

  it('tells valid modes apart from invalid ones', () => {
    expect(isInvalidCacheMode('off')).toBe(false);
    expect(isInvalidCacheMode('refresh')).toBe(false);
  });
});
