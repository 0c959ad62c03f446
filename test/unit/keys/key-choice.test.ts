/**
 * Which key of a pool an attempt sends (docs/fallbacks.md, "Key pools"): the first usable one in
 * pool order, skipping keys cooling down or failing and those this request already set aside; a
 * 429 rests a key for its Retry-After or a jittered backoff, a 401/403 marks it failing, each for
 * the version of the key that got it; the rotation ends with the pool.
 */
import { chooseKey, KeyHealth, MAX_COOL_DOWN_MS } from '../../../lambda/keys/key-health';
import { KeyRotation } from '../../../lambda/keys/key-rotation';
import type { OpenedKey } from '../../../lambda/keys/open-pool';
import type { KeyMark, KeyVersion } from '../../../lambda/keys/ports';

const NOW = 1_000_000;
const key = (label: string, mark?: KeyMark) => ({ label, ...(mark ? { mark } : {}) });
const none = new Set<string>();

describe('chooseKey', () => {
  test('the first key in pool order when all are healthy', () => {
    expect(chooseKey([key('default'), key('b'), key('c')], none, NOW).label).toBe('default');
  });

  test('skips keys cooling down or failing; a cool-down that has passed is healthy again', () => {
    const keys = [key('default', { state: 'cooling', until: NOW + 1 }), key('b', { state: 'failing' }), key('c')];
    expect(chooseKey(keys, none, NOW).label).toBe('c');
    expect(chooseKey([key('default', { state: 'cooling', until: NOW }), key('b')], none, NOW).label).toBe('default');
  });

  test('skips keys this request set aside while another is usable', () => {
    expect(chooseKey([key('default'), key('b')], new Set(['default']), NOW).label).toBe('b');
  });

  test('none usable: the one whose cool-down ends first; all failing: the first, so the provider answers', () => {
    const cooling = [
      key('default', { state: 'cooling', until: NOW + 30_000 }),
      key('b', { state: 'failing' }),
      key('c', { state: 'cooling', until: NOW + 2_000 }),
    ];
    expect(chooseKey(cooling, none, NOW).label).toBe('c');
    expect(chooseKey([key('default', { state: 'failing' }), key('b', { state: 'failing' })], none, NOW).label).toBe(
      'default',
    );
  });
});

describe('KeyHealth', () => {
  const version: KeyVersion = { provider: 'prov-b', label: 'default', updatedAt: '2026-01-01T00:00:00.000Z' };

  test('a 429 rests the key for its Retry-After, capped; without one, a jittered backoff that grows with each 429 in a row', () => {
    let now = NOW;
    const health = new KeyHealth(
      () => now,
      () => 0.5,
    );
    expect(health.answered('a', version, 429, 7_000)).toEqual({ state: 'cooling', until: NOW + 7_000 });
    expect(health.answered('a', { ...version, label: 'b' }, 429, 10 * MAX_COOL_DOWN_MS)).toEqual({
      state: 'cooling',
      until: NOW + MAX_COOL_DOWN_MS,
    });
    now = NOW + 60_000;
    const first = health.answered('a', { ...version, label: 'c' }, 429, undefined) as { until: number };
    const second = health.answered('a', { ...version, label: 'c' }, 429, undefined) as { until: number };
    // 5 to 10 s (half fixed), then 10 to 20 s.
    expect(first.until - now).toBe(7_500);
    expect(second.until - now).toBe(15_000);
  });

  test('401 and 403 mark the key failing; other answers mark nothing', () => {
    const health = new KeyHealth(() => NOW);
    expect(health.answered('a', version, 401, undefined)).toEqual({ state: 'failing' });
    expect(health.answered('a', { ...version, label: 'b' }, 403, undefined)).toEqual({ state: 'failing' });
    for (const status of [200, 400, 404, 500, 503])
      expect(health.answered('a', { ...version, label: 'c' }, status, undefined)).toBeUndefined();
  });

  test("a note applies to the key's version and account: a key saved again starts clean", () => {
    const health = new KeyHealth(() => NOW);
    health.answered('a', version, 401, undefined);
    expect(health.markOf('a', version)).toEqual({ state: 'failing' });
    expect(health.markOf('a', { ...version, updatedAt: '2026-02-01T00:00:00.000Z' })).toBeUndefined();
    expect(health.markOf('other-account', version)).toBeUndefined();
  });

  test("the stronger of the store's mark and the instance's own note holds", () => {
    const health = new KeyHealth(() => NOW);
    health.answered('a', version, 429, 1_000);
    expect(health.markOf('a', { ...version, mark: { state: 'cooling', until: NOW + 9_000 } })).toEqual({
      state: 'cooling',
      until: NOW + 9_000,
    });
    expect(health.markOf('a', { ...version, mark: { state: 'failing' } })).toEqual({ state: 'failing' });
  });
});

describe('KeyRotation', () => {
  const opened = (label: string): OpenedKey => ({
    provider: 'prov-b',
    label,
    updatedAt: '2026-01-01T00:00:00.000Z',
    key: `sk-${label}-0123456789`,
    hint: `…${label}`,
  });

  test('a 429 sets the key aside and the next is tried at once; the mark is kept for the store; the pool ends the switches', () => {
    const kept: Array<[string, KeyMark]> = [];
    const rotation = new KeyRotation(
      [opened('default'), opened('b')],
      new KeyHealth(() => NOW),
      'a',
      () => NOW,
      (k, mark) => kept.push([k.label, mark]),
    );
    expect(rotation.next().label).toBe('default');
    expect(rotation.answered(429, 30_000)).toBe(true);
    expect(rotation.next().label).toBe('b');
    expect(rotation.answered(429, 2_000)).toBe(false);
    // Both rest: the one whose cool-down ends first is sent next, after the wait the loop decides.
    expect(rotation.next().label).toBe('b');
    expect(kept).toEqual([
      ['default', { state: 'cooling', until: NOW + 30_000 }],
      ['b', { state: 'cooling', until: NOW + 2_000 }],
    ]);
  });

  test('a cool-down of 0 s does not bring the key back within the same request: no loop between two keys', () => {
    const rotation = new KeyRotation(
      [opened('default'), opened('b')],
      new KeyHealth(() => NOW),
      'a',
      () => NOW,
      () => undefined,
    );
    rotation.next();
    expect(rotation.answered(429, 0)).toBe(true);
    rotation.next();
    expect(rotation.answered(429, 0)).toBe(false);
  });

  test("one instance's marks apply to its next request at once", () => {
    const health = new KeyHealth(() => NOW);
    const first = new KeyRotation(
      [opened('default'), opened('b')],
      health,
      'a',
      () => NOW,
      () => undefined,
    );
    first.next();
    first.answered(401, undefined);
    const second = new KeyRotation(
      [opened('default'), opened('b')],
      health,
      'a',
      () => NOW,
      () => undefined,
    );
    expect(second.next().label).toBe('b');
  });
});
