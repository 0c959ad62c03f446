import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startDynamoDbLocal } from '../../../lambda/local/dynamodb-local';

/**
 * A store kept on disk gets an index on its stream records (lambda/local/dynamodb-local.ts): without
 * it, every write to a table with a stream costs more CPU than the one before.
 */
test('DynamoDB Local on disk has its stream records indexed by stream once it answers', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'indexed-store-'));
  const store = await startDynamoDbLocal(folder);
  try {
    const db = new DatabaseSync(join(folder, 'dynamodb', 'shared-local-instance.db'), { readOnly: true });
    const index = db.prepare("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'us'").all();
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT MAX(SequenceNumber) FROM us WHERE StreamID = ?').all('any');
    db.close();
    expect(index).toEqual([
      expect.objectContaining({ sql: expect.stringMatching(/ON us \(StreamID, SequenceNumber\)/) as unknown }),
    ]);
    expect(JSON.stringify(plan)).toContain('stream_records_by_stream');
  } finally {
    await store.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
