import { itemFromImage } from '../../store/dynamodb/stream-image';
import type { AuditEntry } from '../ports';
import { toEntry, type AuditItem } from './audit-table';

/** The part of an audit-stream record read here (Lambda's event and the Streams API agree on it). */
export interface AuditStreamRecord {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, unknown>; SequenceNumber?: string };
}

/** An entry from the audit table's stream, with its place in it. */
export interface StreamedAuditEntry {
  entry: AuditEntry;
  lineage: string;
  sequence: string;
}

/** The new entries among stream records: the log is only appended to, so only INSERTs are entries. */
export function streamedAuditEntries(records: readonly AuditStreamRecord[], lineage: string): StreamedAuditEntry[] {
  return records.flatMap((record) => {
    const image = record.dynamodb?.NewImage;
    const sequence = record.dynamodb?.SequenceNumber;
    if (record.eventName !== 'INSERT' || !image || !sequence) return [];
    return [{ entry: toEntry(itemFromImage(image) as unknown as AuditItem), lineage, sequence }];
  });
}
