/**
 * Number and money formatting. Fixed to en-US so that figures read the same for every user
 * and tests can compare them with `/api/stats`; dates follow the browser's locale.
 */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatInt(n: number): string {
  return integer.format(n);
}

const cents = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Significant digits shown for amounts below a dollar. */
const SIGNIFICANT = 3;

/**
 * The one money rule of the dashboard: a dollar or more shows cents (`$1,234.50`); less than a dollar
 * shows three significant digits, and at least two decimals (`$0.50`, `$0.0669`, `$0.00491`,
 * `$0.000167`), so a tiny per-request cost never reads as zero and figures side by side compare.
 */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n) || n === 0) return '$0.00';
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  const rounded = Number(abs.toPrecision(SIGNIFICANT));
  if (rounded >= 1) return `${sign}$${cents.format(abs)}`;
  const decimals = Math.max(2, SIGNIFICANT - 1 - Math.floor(Math.log10(rounded)));
  let text = rounded.toFixed(decimals).replace(/0+$/, '');
  if (text.split('.')[1].length < 2) text = rounded.toFixed(2);
  return `${sign}$${text}`;
}

/**
 * A sum that may leave costs out: "unpriced" when nothing in it had a known price, the amount and
 * "+ unpriced" when part of it had none.
 */
export function formatCost(totals: { cost_usd: number; unpriced_requests?: number }): string {
  if (!totals.unpriced_requests) return formatUsd(totals.cost_usd);
  return totals.cost_usd === 0 ? 'unpriced' : `${formatUsd(totals.cost_usd)} + unpriced`;
}

/** A share as a percentage with one decimal; `—` when there is nothing to divide by. */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '—';
  return ((part / whole) * 100).toFixed(1) + '%';
}

export function formatMs(ms: number): string {
  if (ms >= 1000) return (ms / 1000).toFixed(1) + ' s';
  return formatInt(Math.round(ms)) + ' ms';
}

/** Local date and time; the year only when it is not this year, seconds only when asked for (logs). */
export function formatDateTime(iso: string, { seconds = false } = {}): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: d.getFullYear() === new Date().getFullYear() ? undefined : 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: seconds ? '2-digit' : undefined,
  });
}
