/** One CSV cell's value, before quoting. */
export type Cell = string | number | boolean | undefined;

/**
 * RFC 4180 quoting, for the logs' export and the dashboard's audit export alike. Text that a
 * spreadsheet would run as a formula (starting with = + - @ or a tab/CR) gets a leading apostrophe:
 * model names, requester labels and error messages come from callers and providers.
 */
export function csvCell(value: Cell): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
