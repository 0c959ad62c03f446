import type { BarSeries } from '../components/stacked-bars';
import { utcDaysBetween } from '../period';
import { PROVIDERS, providerColor, providerName } from '../providers';
import type { Stats } from '../types';

/** Per-day series for the two overview charts, with quiet days filled in as zero. */
export function dailySeries(stats: Stats): { days: string[]; cost: BarSeries[]; requests: BarSeries[] } {
  const days = [...new Set([...utcDaysBetween(stats.from, stats.to), ...stats.by_day.map((d) => d.day)])].sort();
  const byDay = new Map(stats.by_day.map((d) => [d.day, d]));

  const seen = new Set<string>(stats.by_provider.filter((p) => p.requests > 0).map((p) => p.provider));
  for (const day of stats.by_day) for (const id of Object.keys(day.by_provider)) seen.add(id);
  // Known providers keep their registry order (and so their colour's place in the stack); unknown ones follow.
  const providers = [...PROVIDERS.map((p) => p.id as string).filter((id) => seen.has(id)), ...[...seen].filter((id) => !PROVIDERS.some((p) => p.id === id)).sort()];

  const series = (field: 'cost_usd' | 'requests'): BarSeries[] =>
    providers.map((id) => ({
      label: providerName(id),
      color: providerColor(id),
      values: days.map((day) => byDay.get(day)?.by_provider[id]?.[field] ?? 0),
    }));
  return { days, cost: series('cost_usd'), requests: series('requests') };
}
