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
}: {
  idPrefix: string;
  amount: string;
  period: BudgetPeriod;
  onAmount: (value: string) => void;
  onPeriod: (value: BudgetPeriod) => void;
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
    </>
  );
}

/** Form state for a budget: the text typed, the period, and the input it makes (the server checks the rest). */
export function useBudgetForm(initial?: BudgetInput) {
  const [amount, setAmount] = useState(initial ? String(initial.limit_usd) : '');
  const [period, setPeriod] = useState<BudgetPeriod>(initial?.period ?? 'month');
  const input = (): BudgetInput => ({ limit_usd: amount.trim() === '' ? Number.NaN : Number(amount), period });
  const reset = (next?: BudgetInput) => {
    setAmount(next ? String(next.limit_usd) : '');
    setPeriod(next?.period ?? 'month');
  };
  return { amount, period, setAmount, setPeriod, input, reset };
}
