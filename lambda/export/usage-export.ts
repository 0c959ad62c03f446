import { gzipSync } from 'node:zlib';
import type { StreamedRow } from '../usage/rollups/fold';
import { DAY_PARTITION, exportedRecord } from './columns';
import type { ObjectStore } from './ports';

/** The folder of the export bucket the usage table's location points at (docs/alerts.md, "Usage in Athena"). */
export const USAGE_PREFIX = 'usage/';

export interface ExportObject {
  key: string;
  body: Uint8Array;
  rows: number;
}

/**
 * A batch of streamed rows as objects: one gzipped JSON Lines object per UTC day the rows fall on,
 * under `usage/dt=<day>/`. An object's name is the stream position of its first row
 * (`<lineage>-<sequence>`), so a batch delivered again from the same row writes the same object
 * again instead of a second copy.
 */
export function exportObjects(rows: readonly StreamedRow[]): ExportObject[] {
  const byDay = new Map<string, StreamedRow[]>();
  for (const streamed of rows) {
    const day = streamed.row.ts.slice(0, 10);
    const dayRows = byDay.get(day);
    if (dayRows) dayRows.push(streamed);
    else byDay.set(day, [streamed]);
  }
  return [...byDay].map(([day, dayRows]) => {
    const first = dayRows[0];
    const lines = dayRows.map(({ row }) => `${JSON.stringify(exportedRecord(row))}\n`).join('');
    return {
      key: `${USAGE_PREFIX}${DAY_PARTITION}=${day}/${first.lineage}-${first.sequence}.json.gz`,
      body: gzipSync(lines),
      rows: dayRows.length,
    };
  });
}

/** Writes a batch's rows to the store, one object per day; throws when any could not be written. */
export async function exportRows(store: ObjectStore, rows: readonly StreamedRow[]): Promise<void> {
  await Promise.all(exportObjects(rows).map(({ key, body }) => store.put(key, body)));
}
