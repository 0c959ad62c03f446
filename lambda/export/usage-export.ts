import type { StreamedRow } from '../usage/rollups/fold';
import { exportedRecord } from './columns';
import { dailyObjects, putObjects, type ExportObject } from './daily-objects';
import type { ObjectStore } from './ports';

/** The folder of the export bucket the usage table's location points at (docs/alerts.md, "Usage in Athena"). */
export const USAGE_PREFIX = 'usage/';

/** A batch of streamed rows as objects: one per UTC day the rows fall on, under `usage/dt=<day>/`. */
export function exportObjects(rows: readonly StreamedRow[]): ExportObject[] {
  return dailyObjects(
    USAGE_PREFIX,
    rows.map(({ row, lineage, sequence }) => ({
      day: row.ts.slice(0, 10),
      lineage,
      sequence,
      record: exportedRecord(row),
    })),
  );
}

/** Writes a batch's rows to the store, one object per day; throws when any could not be written. */
export async function exportRows(store: ObjectStore, rows: readonly StreamedRow[]): Promise<void> {
  await putObjects(store, exportObjects(rows));
}
