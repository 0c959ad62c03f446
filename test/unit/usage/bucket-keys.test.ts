import fc from 'fast-check';
import {
  dayKey,
  effectivePeriod,
  escapeSegment,
  hourKey,
  MAX_LABEL_CHARS,
  parseBucketKey,
  periodUnits,
  tagBucketKeys,
  unescapeSegment,
  unitOfBucket,
  utcDays,
  type KeyRange,
} from '../../../lambda/usage/rollups/bucket-keys';

const dims = { provider: 'prov-b', model: 'fam-4o-mini', requester: 'alice', token: 'acc1_tok1', kind: 'responses' };
const at = new Date('2026-11-21T13:45:12.345Z');

function inRanges(ranges: KeyRange[], key: string): number {
  return ranges.filter((r) => key >= r.lower && key <= r.upper).length;
}

describe('bucket keys', () => {
  it('starts with the granularity and the UTC hour or day', () => {
    expect(hourKey(at, dims)).toBe('H#2026-11-21T13#prov-b#fam-4o-mini#alice#acc1_tok1#responses');
    expect(dayKey(at, dims)).toBe('D#2026-11-21#prov-b#fam-4o-mini#alice#acc1_tok1#responses');
    expect(dayKey(new Date('2026-11-21T23:30:00-02:00'), dims)).toBe(
      'D#2026-11-22#prov-b#fam-4o-mini#alice#acc1_tok1#responses',
    );
  });

  it('keeps an empty requester as an empty part', () => {
    const key = hourKey(at, { ...dims, requester: '' });
    expect(key).toBe('H#2026-11-21T13#prov-b#fam-4o-mini##acc1_tok1#responses');
    expect(parseBucketKey(key)).toEqual({
      granularity: 'H',
      day: '2026-11-21',
      hour: '2026-11-21T13',
      ...dims,
      requester: '',
    });
  });

  it('reads a key written before tokens were counted as token "" and kind ""', () => {
    expect(parseBucketKey('D#2026-11-21#prov-b#fam-4o-mini#alice')).toEqual({
      granularity: 'D',
      day: '2026-11-21',
      ...dims,
      token: '',
      kind: '',
    });
  });

  it('reads a key written before kinds were counted as kind ""', () => {
    expect(parseBucketKey('D#2026-11-21#prov-b#fam-4o-mini#alice#acc1_tok1')).toEqual({
      granularity: 'D',
      day: '2026-11-21',
      ...dims,
      kind: '',
    });
  });

  it('escapes # and % so any label splits back exactly', () => {
    expect(escapeSegment('team#1 100%')).toBe('team%231 100%25');
    fc.assert(
      fc.property(
        fc.string({ maxLength: MAX_LABEL_CHARS }),
        fc.string({ maxLength: MAX_LABEL_CHARS }),
        (model, requester) => {
          expect(unescapeSegment(escapeSegment(model))).toBe(model);
          expect(
            parseBucketKey(dayKey(at, { provider: 'prov-a', model, requester, token: 'acc_tok', kind: 'messages' })),
          ).toEqual({
            granularity: 'D',
            day: '2026-11-21',
            provider: 'prov-a',
            model,
            requester,
            token: 'acc_tok',
            kind: 'messages',
          });
        },
      ),
    );
  });

  it('cuts long labels so the key stays under DynamoDB’s 1024-byte sort-key limit', () => {
    const huge = '#😀'.repeat(5000);
    const key = hourKey(at, {
      provider: 'prov-a',
      model: huge,
      requester: huge,
      token: 'accountid1234_abcdefgh',
      kind: 'count_tokens',
    });
    expect(Buffer.byteLength(key)).toBeLessThan(1024);
    expect(parseBucketKey(key).requester).toBe(Array.from(huge).slice(0, MAX_LABEL_CHARS).join(''));
  });

  it('rejects keys that are not rollup keys', () => {
    expect(() => parseBucketKey('X#2026-11-21#a#b#c')).toThrow();
    expect(() => parseBucketKey('D#2026-11-21#a#b')).toThrow();
    expect(() => parseBucketKey('D#2026-11-21#a#b#c#d#e#f')).toThrow();
  });
});

describe('effectivePeriod', () => {
  it('widens to whole hours: from down, to up', () => {
    const period = effectivePeriod(new Date('2026-11-21T13:20:00Z'), new Date('2026-11-21T15:00:00.001Z'));
    expect(period.from.toISOString()).toBe('2026-11-21T13:00:00.000Z');
    expect(period.to.toISOString()).toBe('2026-11-21T16:00:00.000Z');
    const exact = effectivePeriod(new Date('2026-11-21T13:00:00Z'), new Date('2026-11-21T15:00:00Z'));
    expect(exact.to.toISOString()).toBe('2026-11-21T15:00:00.000Z');
  });
});

describe('periodUnits', () => {
  const unitsOf = (from: string, to: string) =>
    periodUnits(new Date(from), new Date(to)).map((u) => `${u.granularity} ${u.hour ?? u.day}`);

  it('covers a period longer than two days with its whole days and the hours of the partial days at either edge', () => {
    const units = unitsOf('2026-11-01T21:00Z', '2026-11-05T02:00Z');
    expect(units).toEqual([
      'H 2026-11-01T21',
      'H 2026-11-01T22',
      'H 2026-11-01T23',
      'D 2026-11-02',
      'D 2026-11-03',
      'D 2026-11-04',
      'H 2026-11-05T00',
      'H 2026-11-05T01',
    ]);
    const [first] = periodUnits(new Date('2026-11-01T21:00Z'), new Date('2026-11-05T02:00Z'));
    expect(first.items).toEqual({ lower: 'H#2026-11-01T21#', upper: 'H#2026-11-01T21$' });
    expect(periodUnits(new Date('2026-11-01T00:00Z'), new Date('2026-12-01T00:00Z')).map((u) => u.items)[0]).toEqual({
      lower: 'D#2026-11-01#',
      upper: 'D#2026-11-01$',
    });
  });

  it('covers a period of at most two days hour by hour, across midnight too', () => {
    expect(unitsOf('2026-11-01T22:00Z', '2026-11-02T01:00Z')).toEqual([
      'H 2026-11-01T22',
      'H 2026-11-01T23',
      'H 2026-11-02T00',
    ]);
    expect(periodUnits(new Date('2026-11-01T00:00Z'), new Date('2026-11-03T00:00Z'))).toHaveLength(48);
    expect(unitsOf('2026-11-01T13:00Z', '2026-11-01T13:00Z')).toEqual([]);
  });

  it('counts every hour of the period exactly once, and nothing outside it', () => {
    const base = Date.parse('2026-10-30T00:00:00Z');
    const hour = 3_600_000;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 * 12 }), fc.integer({ min: 1, max: 24 * 12 }), (startHour, hours) => {
        const from = new Date(base + startHour * hour);
        const to = new Date(from.getTime() + hours * hour);
        const units = periodUnits(from, to);
        const ranges = units.map((u) => u.items);
        const wrong: string[] = [];
        // Units are in time order, each starting where the one before ended.
        units.forEach((u, i) => {
          if (u.startMs !== (i === 0 ? from.getTime() : units[i - 1].endMs)) wrong.push(`unit ${i}`);
        });
        if (units.at(-1)?.endMs !== to.getTime()) wrong.push('end');
        for (let h = startHour - 30; h < startHour + hours + 30; h++) {
          const t = new Date(base + h * hour);
          const inside = t >= from && t < to;
          // An hour is counted through its HOUR bucket or its DAY bucket, never both.
          const counted = inRanges(ranges, hourKey(t, dims)) + inRanges(ranges, dayKey(t, dims));
          if (inside ? counted !== 1 : inRanges(ranges, hourKey(t, dims)) !== 0) wrong.push(`hour ${t.toISOString()}`);
        }
        // A day bucket is read only when its whole day is inside a period longer than two days.
        for (let d = -2; d < 15; d++) {
          const dayStart = new Date(base + d * 24 * hour);
          const whole = hours > 48 && dayStart >= from && dayStart.getTime() + 24 * hour <= to.getTime();
          if (
            inRanges(ranges, dayKey(dayStart, { ...dims, requester: '\u{10FFFF}', token: '\u{10FFFF}' })) !==
            (whole ? 1 : 0)
          )
            wrong.push(`day ${dayStart.toISOString()}`);
        }
        expect(wrong).toEqual([]);
      }),
    );
  });
});

describe('unitOfBucket', () => {
  it('gives the hour or day a rollup item counts in, with its key range and when it ends', () => {
    const tagAt = tagBucketKeys(at, 'team', 'a#b');
    for (const bucket of [hourKey(at, dims), tagAt[0]])
      expect(unitOfBucket(bucket)).toEqual({
        granularity: 'H',
        day: '2026-11-21',
        hour: '2026-11-21T13',
        startMs: Date.parse('2026-11-21T13:00:00Z'),
        endMs: Date.parse('2026-11-21T14:00:00Z'),
        items: { lower: 'H#2026-11-21T13#', upper: 'H#2026-11-21T13$' },
      });
    for (const bucket of [dayKey(at, dims), tagAt[1]])
      expect(unitOfBucket(bucket)).toEqual({
        granularity: 'D',
        day: '2026-11-21',
        startMs: Date.parse('2026-11-21T00:00:00Z'),
        endMs: Date.parse('2026-11-22T00:00:00Z'),
        items: { lower: 'D#2026-11-21#', upper: 'D#2026-11-21$' },
      });
    expect(() => unitOfBucket('CB#2026-11-21')).toThrow();
  });
});

describe('utcDays', () => {
  it('lists every UTC day the period touches', () => {
    expect(utcDays(new Date('2026-02-27T22:00Z'), new Date('2026-03-02T01:00Z'))).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
    expect(utcDays(new Date('2026-03-01T00:00Z'), new Date('2026-03-02T00:00Z'))).toEqual(['2026-03-01']);
  });
});
