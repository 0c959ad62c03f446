import { ValidationError } from '../base/errors';

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** The one reading of a time in a management query (`/api/logs`, `/api/stats`): a strict ISO 8601 date or date-time; a date-time without an offset is read as UTC, whatever the server's time zone. */
export function isoParam(query: URLSearchParams, name: string): Date | undefined {
  // An unencoded '+' of an offset arrives as a space (form encoding): take it back.
  const value = query
    .get(name)
    ?.replace(/ (\d{2}:?\d{2})$/, '+$1')
    .trim();
  if (!value) return undefined;
  const match = ISO_TIME.exec(value);
  const hasTime = value.includes('T');
  const time = match ? Date.parse(hasTime && !match[4] ? `${value}Z` : value) : NaN;
  // Date.parse rolls 2026-02-30 over into March; a real calendar date is required.
  const daysInMonth = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]), 0)).getUTCDate() : 0;
  if (!match || Number.isNaN(time) || Number(match[3]) < 1 || Number(match[3]) > daysInMonth) {
    throw new ValidationError(`${name} must be an ISO 8601 time, e.g. 2026-11-21T13:00:00Z.`, name);
  }
  return new Date(time);
}
