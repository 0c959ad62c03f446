import type { StreamedAuditEntry } from '../audit/dynamodb/audit-stream';
import { exportedAuditRecord } from './columns';
import { dailyObjects, putObjects } from './daily-objects';
import type { ObjectStore } from './ports';

/** The folder of the export bucket the audit table's location points at (docs/people.md, "The audit log"). */
export const AUDIT_PREFIX = 'audit/';

/** Writes a batch of audit entries beside the usage rows, one object per UTC day, under `audit/dt=<day>/`. */
export async function exportAuditEntries(store: ObjectStore, entries: readonly StreamedAuditEntry[]): Promise<void> {
  const records = entries.map(({ entry, lineage, sequence }) => ({
    day: entry.at.slice(0, 10),
    lineage,
    sequence,
    record: exportedAuditRecord(entry),
  }));
  await putObjects(store, dailyObjects(AUDIT_PREFIX, records));
}
