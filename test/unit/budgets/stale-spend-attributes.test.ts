import { staleAttributes } from '../../../lambda/budgets/dynamodb/spend-fold';

const NOW = Date.parse('2026-11-28T05:00:00Z');
const HOUR = 3_600_000;
const stamped = (ageMs: number) => `${'1'.padStart(40, '0')}@${Math.floor((NOW - ageMs) / 1000)}`;

it("drops a shard's watermark only once the stream can no longer deliver its records (kept 25 hours)", () => {
  const item = {
    'w#fresh': stamped(24 * HOUR),
    'w#edge': stamped(25 * HOUR - 1000),
    'w#old': stamped(25 * HOUR + 1000),
  };
  expect(staleAttributes(item, NOW)).toEqual(['w#old']);
});

it('keeps the days a late row can still add to (two days back) and this month and the last; drops what is older', () => {
  const item = {
    spent_total_nanos: 5,
    'd#2026-11-28': 1,
    'd#2026-11-26': 1,
    'd#2026-11-25': 1,
    'm#2026-11': 1,
    'm#2026-10': 1,
    'm#2026-09': 1,
    limit_nanos: 10,
    period: 'month',
  };
  expect(staleAttributes(item, NOW).sort()).toEqual(['d#2026-11-25', 'm#2026-09']);
});
