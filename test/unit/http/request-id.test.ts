import { newRequestId, requestIdTime } from '../../../lambda/http/request';

describe('request ids', () => {
  it('start with their arrival time and end with 64 random bits, never repeated across the random pool refills', () => {
    const now = Date.parse('2026-11-23T18:00:00Z');
    // 5,000 ids span about ten refills of the 4 KB pool (8 bytes each).
    const ids = Array.from({ length: 5_000 }, (_, i) => newRequestId(now + i));
    for (const [i, id] of ids.entries()) {
      expect(id).toMatch(/^[0-9a-z]{9}-[0-9a-f]{16}$/);
      expect(requestIdTime(id)).toBe(now + i);
    }
    const randomParts = ids.map((id) => id.slice(10));
    expect(new Set(randomParts).size).toBe(ids.length);
    // Every hex digit turns up in every position: the bytes are random, not a zeroed or repeated pool.
    for (let position = 0; position < 16; position++)
      expect(new Set(randomParts.map((part) => part[position])).size).toBe(16);
  });
});
