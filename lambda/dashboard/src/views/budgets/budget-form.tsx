import { useState } from 'preact/hooks';
import type { BudgetInput, BudgetPeriod } from '../../types';
import { PERIOD_LABELS } from './budget-bar';

/** The limit and period fields, shared by the token and requester editors. */
export function BudgetFields({
  idPrefix,
  amount,
  period,
  onAmount,
  onPeriod,
  alertAt,
  onAlertAt,
}: {
  idPrefix: string;
  amount: string;
  period: BudgetPeriod;
  onAmount: (value: string) => void;
  onPeriod: (value: BudgetPeriod) => void;
  alertAt: string;
  onAlertAt: (value: string) => void;
}) {
  return (
    <>
      <span class="budget-field">
        <label for={`${idPrefix}-limit`}>Limit (USD)</label>
        <input
          id={`${idPrefix}-limit`}
          type="number"
          inputMode="decimal"
          step="any"
          required
          value={amount}
          placeholder="25"
          data-testid={`${idPrefix}-limit`}
          onInput={(e) => onAmount(e.currentTarget.value)}
        />
      </span>
      <span class="budget-field">
        <label for={`${idPrefix}-period`}>Period (UTC)</label>
        <select
          id={`${idPrefix}-period`}
          value={period}
          data-testid={`${idPrefix}-period`}
          onChange={(e) => onPeriod(e.currentTarget.value as BudgetPeriod)}
        >
          {(Object.keys(PERIOD_LABELS) as BudgetPeriod[]).map((value) => (
            <option key={value} value={value}>
              {value === 'day' ? 'Day' : value === 'month' ? 'Month' : 'Total (never resets)'}
            </option>
          ))}
        </select>
      </span>
      <span class="budget-field">
        <label for={`${idPrefix}-alert-at`}>Alert at (% of limit)</label>
        <input
          id={`${idPrefix}-alert-at`}
          type="text"
          value={alertAt}
          placeholder="80, 100"
          title="An alert is sent once per period when the spend reaches each percentage (docs/alerts.md)"
          data-testid={`${idPrefix}-alert-at`}
          onInput={(e) => onAlertAt(e.currentTarget.value)}
        />
      </span>
    </>
  );
}

const DEFAULT_ALERT_PERCENTS = '80, 100';

/** `[0.8, 1]` as the form shows it: `80, 100`. */
const percents = (fractions: readonly number[] | undefined) =>
  fractions
    ? fractions.map((fraction) => String(Math.round(fraction * 10_000) / 100)).join(', ')
    : DEFAULT_ALERT_PERCENTS;

/** `80, 100` as the API takes it; a word that is not a number is sent as typed, so the server's message names the field. */
function fractions(text: string): number[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((word) => (Number.isFinite(Number(word)) ? Number(word) / 100 : (word as unknown as number)));
}

/** Form state for a budget: the text typed, the period, the alert percentages, and the input they make (the server checks the rest). */
export function useBudgetForm(initial?: BudgetInput) {
  const [amount, setAmount] = useState(initial ? String(initial.limit_usd) : '');
  const [period, setPeriod] = useState<BudgetPeriod>(initial?.period ?? 'month');
  const [alertAt, setAlertAt] = useState(percents(initial?.alert_at));
  const input = (): BudgetInput => ({
    limit_usd: amount.trim() === '' ? Number.NaN : Number(amount),
    period,
    alert_at: fractions(alertAt),
  });
  const reset = (next?: BudgetInput) => {
    setAmount(next ? String(next.limit_usd) : '');
    setPeriod(next?.period ?? 'month');
    setAlertAt(percents(next?.alert_at));
  };
  return { amount, period, alertAt, setAmount, setPeriod, setAlertAt, input, reset };
}
