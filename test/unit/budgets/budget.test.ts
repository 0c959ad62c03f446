import { parseBudget } from '../../../lambda/api/budget-routes';
import {
  budgetStatus,
  exceededMessage,
  formatUsd,
  isExhausted,
  tightest,
  type BudgetStatus,
} from '../../../lambda/budgets/budget';
import { budgetHeaders } from '../../../lambda/budgets/remaining-header';
import { dayOf, monthOf, resetsAt } from '../../../lambda/budgets/periods';

const at = Date.parse('2027-02-28T23:59:59.999Z');
const token = { kind: 'token' as const, tokenId: 'acct_tok' };
const requester = { kind: 'requester' as const, requester: 'ana' };

describe('budget periods (UTC)', () => {
  it('day and month end at the next UTC midnight and the next 1st; total never', () => {
    expect(new Date(resetsAt('day', at)!).toISOString()).toBe('2027-03-01T00:00:00.000Z');
    expect(new Date(resetsAt('month', at)!).toISOString()).toBe('2027-03-01T00:00:00.000Z');
    expect(new Date(resetsAt('month', Date.parse('2027-12-15T08:00:00Z'))!).toISOString()).toBe(
      '2028-01-01T00:00:00.000Z',
    );
    expect(resetsAt('total', at)).toBeUndefined();
    expect(monthOf(at)).toBe('2027-02');
    expect(dayOf(at)).toBe('2027-02-28');
    // A non-UTC offset in the clock's reading changes nothing: periods follow the instant.
    expect(dayOf(Date.parse('2027-03-01T01:30:00+02:00'))).toBe('2027-02-28');
  });
});

describe('limits in nano-dollars', () => {
  it.each([
    [25, 25_000_000_000],
    [0.000001, 1_000],
    [0.1, 100_000_000],
    [1_000_000, 1_000_000_000_000_000],
    [19.999999, 19_999_999_000],
  ])('%s USD is %s nanos exactly', (usd, nanos) => {
    expect(parseBudget({ limit_usd: usd, period: 'day' }).limitNanos).toBe(nanos);
  });

  it.each([[0.1 + 0.2], [1e-7], [-0], [Number.POSITIVE_INFINITY], [1_000_000.5]])('%s is refused', (usd) => {
    expect(() => parseBudget({ limit_usd: usd, period: 'month' })).toThrow(/limit_usd/);
  });
});

describe('checking and showing a budget', () => {
  const status = (
    subject: BudgetStatus['subject'],
    limitNanos: number,
    spent: number,
    period: 'day' | 'month' | 'total' = 'day',
  ) => budgetStatus(subject, { limitNanos, period }, { day: spent, month: spent, total: spent }, at);

  it('is used up at the limit, not before', () => {
    expect(isExhausted(status(token, 1_000, 999))).toBe(false);
    expect(isExhausted(status(token, 1_000, 1_000))).toBe(true);
  });

  it('the stricter budget wins, and the header shows what is left of it, rounded down and never below 0', () => {
    const loose = status(token, 10_000_000_000, 1_000);
    const strict = status(requester, 5_000_000, 1_234);
    expect(tightest([loose, strict])).toBe(strict);
    expect(budgetHeaders([loose, strict])).toEqual({ 'x-proxy-budget-remaining-usd': '0.004998' });
    expect(budgetHeaders([status(token, 1_000, 5_000)])).toEqual({ 'x-proxy-budget-remaining-usd': '0.000000' });
    expect(budgetHeaders([])).toEqual({});
    expect(budgetHeaders(undefined)).toEqual({});
  });

  it('formats dollars with 6 decimals from integer nanos', () => {
    expect(formatUsd(25_000_000_000)).toBe('25.000000');
    expect(formatUsd(1_999)).toBe('0.000001');
    expect(formatUsd(123_456_789_999)).toBe('123.456789');
  });

  it('the refusal names the budget, the spend, the limit and the reset', () => {
    expect(exceededMessage(status(requester, 2_500_000_000, 2_500_931_000))).toBe(
      'Budget exceeded: requester "ana" has spent $2.500931 of its daily budget of $2.500000. It resets at 2027-03-01T00:00:00.000Z.',
    );
    expect(exceededMessage(status(token, 1_000, 2_000, 'total'))).toBe(
      'Budget exceeded: proxy token acct_tok has spent $0.000002 of its total budget of $0.000001. A total budget does not reset; raise or remove it to continue.',
    );
  });
});
