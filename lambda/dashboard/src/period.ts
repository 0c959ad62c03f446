/** The overview's period: presets count whole local days back from today, up to now. */
export type PeriodKind = 'today' | '7d' | '30d' | 'custom';

export interface Period {
  kind: PeriodKind;
  /** `YYYY-MM-DD` local dates, only for `custom`; both ends included. */
  from?: string;
  to?: string;
}

export const PRESETS: readonly { kind: Exclude<PeriodKind, 'custom'>; label: string; days: number }[] = [
  { kind: 'today', label: 'Today', days: 1 },
  { kind: '7d', label: '7 days', days: 7 },
  { kind: '30d', label: '30 days', days: 30 },
];

function localMidnight(date: Date, addDays = 0): Date {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + addDays);
}

/** `YYYY-MM-DD` (local) → a Date at local midnight; undefined when malformed. */
export function parseLocalDate(text: string | undefined): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text ?? '');
  if (!match) return undefined;
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function toLocalDateInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * The ISO `from`/`to` sent to `/api/stats`: the period [from, to), `to` excluded. Computed at fetch time,
 * so a refresh includes the newest requests.
 */
export function periodRange(period: Period, now = new Date()): { from: string; to: string } {
  if (period.kind === 'custom') {
    const from = parseLocalDate(period.from) ?? localMidnight(now);
    const toDay = parseLocalDate(period.to) ?? localMidnight(now);
    return { from: from.toISOString(), to: localMidnight(toDay, 1).toISOString() };
  }
  const preset = PRESETS.find((p) => p.kind === period.kind) ?? PRESETS[1];
  return { from: localMidnight(now, 1 - preset.days).toISOString(), to: now.toISOString() };
}

export function periodFromParams(params: URLSearchParams): Period {
  const kind = params.get('period');
  if (kind === 'custom') {
    return { kind, from: params.get('from') ?? undefined, to: params.get('to') ?? undefined };
  }
  if (kind === 'today' || kind === '7d' || kind === '30d') return { kind };
  return { kind: '7d' };
}

export function periodToParams(period: Period): Record<string, string> {
  if (period.kind !== 'custom') return { period: period.kind };
  return { period: 'custom', from: period.from ?? '', to: period.to ?? '' };
}

/** Every UTC day that [from, to) touches, so a chart shows quiet days as zero instead of skipping them. */
export function utcDaysBetween(fromIso: string, toIso: string, maxDays = 400): string[] {
  const start = new Date(fromIso);
  const end = new Date(new Date(toIso).getTime() - 1);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return [];
  const days: string[] = [];
  const cursor = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
  while (cursor <= end && days.length < maxDays) {
    days.push(cursor.toISOString().slice(0, 10));
    cursor.setUTCDate(cursor.getUTCDate() + 1);
  }
  return days;
}
