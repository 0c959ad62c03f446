import { logCsvStream, nanosAsDecimal } from '../../../lambda/api/log-csv';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { csvRows } from '../../support/csv';
import { createTestTables } from '../../support/tables';

let log: DynamoUsageLog;
let destroy: () => void;

beforeAll(async () => {
  const { clients, tables } = await createTestTables();
  log = new DynamoUsageLog(clients.doc, tables.usageLogs);
  destroy = () => clients.raw.destroy();
});
afterAll(() => destroy());

function row(i: number): UsageRow {
  const ts = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 1000).toISOString();
  return {
    ...{
      account_id: 'acc-export',
      id: `${Date.parse(ts).toString(36).padStart(9, '0')}-${String(i).padStart(16, '0')}`,
      ts,
    },
    ...{
      provider: 'prov-b',
      kind: 'chat',
      model: i % 3 ? 'gpt-4o-mini' : 'gpt-4o',
      input_tokens: i,
      output_tokens: 1,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
    ...{
      cost_nanos: i * 150,
      cost_usd: (i * 150) / 1e9,
      saved_nanos: 0,
      saved_usd: 0,
      priced: true,
      latency_ms: 5,
      status_code: 200,
    },
    ...{ cached: false, stream: false, mode: 'stored', token_id: 'acc-export_t1' },
  };
}

describe('the CSV export', () => {
  it('streams every row of the period, past any page size, newest first, one page in memory at a time', async () => {
    const rows = Array.from({ length: 1_234 }, (_, i) => row(i));
    for (let i = 0; i < rows.length; i += 100) await Promise.all(rows.slice(i, i + 100).map((r) => log.write(r)));
    let text = '';
    let chunks = 0;
    for await (const chunk of await logCsvStream(log, 'acc-export', {})) {
      text += String(chunk);
      chunks++;
    }
    const [, ...lines] = csvRows(text);
    expect(lines.map((l) => l[0])).toEqual(rows.map((r) => r.id).reverse());
    // A header, then one chunk per store page of at most 500 rows.
    expect(chunks).toBeGreaterThanOrEqual(1 + Math.ceil(rows.length / 500));

    const filtered = [];
    for await (const chunk of await logCsvStream(log, 'acc-export', { model: 'gpt-4o-', from: rows[600].ts }))
      filtered.push(String(chunk));
    const ids = csvRows(filtered.join(''))
      .slice(1)
      .map((l) => l[0]);
    expect(ids).toEqual(
      rows
        .filter((r, i) => i >= 600 && i % 3 !== 0)
        .map((r) => r.id)
        .reverse(),
    );
  });

  it('writes dollars from integer nanos, exactly and never in exponent form', () => {
    expect([0, 150, 1_000_000_000, 1_234_567_890, 10, -5].map(nanosAsDecimal)).toEqual([
      '0',
      '0.00000015',
      '1',
      '1.23456789',
      '0.00000001',
      '-0.000000005',
    ]);
  });
});
