import type { LogRow } from '../types';

/**
 * The list after a refresh, newest first. When the fresh first page reaches rows already shown,
 * the new ones go on top and every row loaded before (pages added with "Load more" included)
 * stays, with its cursor. When it doesn't (more new rows than a page), the list starts over
 * from the fresh page, so it never shows a gap.
 */
export function mergeRefreshed(
  shown: { rows: LogRow[]; cursor: string | null },
  fresh: { items: LogRow[]; next_cursor: string | null },
): { rows: LogRow[]; cursor: string | null } {
  const known = new Set(shown.rows.map((row) => row.id));
  const overlaps = fresh.items.some((row) => known.has(row.id));
  if (!overlaps || shown.rows.length <= fresh.items.length) return { rows: fresh.items, cursor: fresh.next_cursor };
  return { rows: [...fresh.items.filter((row) => !known.has(row.id)), ...shown.rows], cursor: shown.cursor };
}
