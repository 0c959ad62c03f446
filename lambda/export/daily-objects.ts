import { gzipSync } from 'node:zlib';
import { DAY_PARTITION } from './columns';
import type { ObjectStore } from './ports';

/** A record to export, with the UTC day it falls on and its place in the stream it came from. */
export interface DailyRecord {
  day: string;
  lineage: string;
  sequence: string;
  record: Record<string, unknown>;
}

export interface ExportObject {
  key: string;
  body: Uint8Array;
  rows: number;
}

/**
 * Records as objects: one gzipped JSON Lines object per UTC day, under `<prefix>dt=<day>/`. An
 * object's name is the stream position of its first record (`<lineage>-<sequence>`), so a batch
 * delivered again from the same record writes the same object again instead of a second copy.
 */
export function dailyObjects(prefix: string, records: readonly DailyRecord[]): ExportObject[] {
  const byDay = new Map<string, DailyRecord[]>();
  for (const record of records) {
    const dayRecords = byDay.get(record.day);
    if (dayRecords) dayRecords.push(record);
    else byDay.set(record.day, [record]);
  }
  return [...byDay].map(([day, dayRecords]) => {
    const first = dayRecords[0];
    const lines = dayRecords.map(({ record }) => `${JSON.stringify(record)}\n`).join('');
    return {
      key: `${prefix}${DAY_PARTITION}=${day}/${first.lineage}-${first.sequence}.json.gz`,
      body: gzipSync(lines),
      rows: dayRecords.length,
    };
  });
}

/** Writes the objects; throws when any could not be written. */
export async function putObjects(store: ObjectStore, objects: readonly ExportObject[]): Promise<void> {
  await Promise.all(objects.map(({ key, body }) => store.put(key, body)));
}
