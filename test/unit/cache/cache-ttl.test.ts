import { cacheTtlSeconds, DEFAULT_CACHE_TTL_SECONDS, MAX_CACHE_TTL_SECONDS } from '../../../lambda/cache/cache-ttl';

const DAY = 86_400;

describe('cacheTtlSeconds (Cache-Control)', () => {
  it('defaults to 7 days and caps at 365 days', () => {
    expect(DEFAULT_CACHE_TTL_SECONDS).toBe(7 * DAY);
    expect(MAX_CACHE_TTL_SECONDS).toBe(365 * DAY);
  });

  it.each([
    [undefined, 7 * DAY],
    ['', 7 * DAY],
    ['max-age=3600', 3600],
    ['max-age=1', 1],
    ['max-age=0', 0],
    ['MAX-AGE=60', 60],
    ['max-age = 60', 60],
    ['max-age="120"', 120],
    [`max-age=${365 * DAY}`, 365 * DAY],
    [`max-age=${365 * DAY + 1}`, 365 * DAY],
    ['max-age=99999999999999999999999999', 365 * DAY],
    ['no-cache, max-age=60', 60],
    ['private,max-age=90,must-revalidate', 90],
    ['no-store', 7 * DAY],
    ['max-age=', 7 * DAY],
    ['max-age=abc', 7 * DAY],
    ['max-age=-5', 7 * DAY],
    ['max-age=1.5', 7 * DAY],
    ['s-maxage=60', 7 * DAY],
    ['garbage;;;', 7 * DAY],
  ])('%p → %p seconds', (header, seconds) => {
    expect(cacheTtlSeconds(header)).toBe(seconds);
  });
});
