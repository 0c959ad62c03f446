import { itemFromImage } from '../../store/dynamodb/stream-image';
import type { UsageRow } from '../usage-row';
import { accountOfRowPartition } from './row-shards';
import type { StreamedRow } from '../rollups/fold';

/** The part of a DynamoDB stream record the fold reads (Lambda's event and the Streams API agree on it). */
export interface UsageStreamRecord {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, unknown>; SequenceNumber?: string };
}

/**
 * The new rows among stream records. Only INSERTs count: a row is written
 * once, so a MODIFY is the same row written again (a retried write whose first
 * answer was lost) and a REMOVE is its expiry; neither is a new request.
 */
export function streamedRows(records: readonly UsageStreamRecord[], lineage: string): StreamedRow[] {
  const rows: StreamedRow[] = [];
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    const sequence = record.dynamodb?.SequenceNumber;
    if (record.eventName !== 'INSERT' || !image || !sequence) continue;
    const row = itemFromImage(image) as unknown as UsageRow;
    // The stored key names the row's shard; the rollups are the account's.
    rows.push({ row: { ...row, account_id: accountOfRowPartition(row.account_id) }, lineage, sequence });
  }
  return rows;
}
