/**
 * Number and money formatting. Fixed to en-US so that figures read the same for every user
 * and tests can compare them with `/api/stats`; dates follow the browser's locale.
 */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatInt(n: number): string {
  return integer.format(n);
}

/**
 * Dollars with enough precision for tiny per-request costs: `$12.34`, `$0.1234`, `$0.001234`.
 * Amounts below a cent keep four significant digits; trailing zeros beyond the cents are dropped.
 */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n) || n === 0) return '$0.00';
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  if (abs >= 1) {
    return sign + '$' + new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(abs);
  }
  const decimals = abs >= 0.01 ? 4 : Math.min(12, 3 - Math.floor(Math.log10(abs)));
  let text = abs.toFixed(decimals).replace(/0+$/, '');
  const [, fraction = ''] = text.split('.');
  if (fraction.length < 2) text = abs.toFixed(2);
  return sign + '$' + text;
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
