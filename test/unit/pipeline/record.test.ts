/**
 * The record step never loses a row without a word. Its work is tracked as the request's background
 * work, which swallows what fails so that one row can't fail another request: a row that could not
 * be built, or that neither the store nor the spool took, is logged as an error naming the request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackgroundWork } from '../../../lambda/base/background-work';
import type { Logger } from '../../../lambda/base/logger';
import { recordUsage, type RecordDeps } from '../../../lambda/pipeline/record';
import type { Recordable } from '../../../lambda/pipeline/state';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import type { PriceTable } from '../../../lambda/pricing/price-table';
import { FileRowSpool } from '../../../lambda/usage/row-spool';
import { RowWriter } from '../../../lambda/usage/row-writer';
import type { UsageLog, UsageRow } from '../../../lambda/usage/usage-row';

const prices = loadPriceTable();
const completion = {
  status: 200,
  model: 'claude-haiku-4-5-20251001',
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
};

/** What `recordUsage` reads of a request that proved a row's facts. */
function requestState(): Recordable {
  return {
    request: { id: 'req-record-1', receivedAt: Date.now(), startedAt: performance.now(), headers: {} },
    token: { accountId: 'acct', tokenId: 'tok', secret: 'secret-part' },
    provider: { id: 'prov-a' },
    endpoint: { kind: 'messages', dialect: { billing: 'tokens' } },
    body: { model: 'claude-haiku-4-5-20251001' },
    tags: {},
    stream: false,
    mode: 'stored',
    work: new BackgroundWork(),
  } as unknown as Recordable;
}

/** A logger that keeps what it was told. */
function notingLog(): Logger & { errors: Array<{ message: string; fields?: Record<string, unknown> }> } {
  const errors: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  return { info() {}, warn() {}, error: (message, fields) => void errors.push({ message, fields }), errors };
}

const storing = (rows: UsageRow[]): UsageLog => ({
  write: async (row) => void rows.push(row),
  query: async () => ({ items: [], nextCursor: null }),
  find: async () => undefined,
});
const refusing: UsageLog = {
  ...storing([]),
  write: async () => Promise.reject(new Error('the store refused the row')),
};

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'record-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function record(deps: RecordDeps): Promise<void> {
  const state = requestState();
  recordUsage(deps)(state, completion);
  await state.work.drain();
}

test('a row the store takes is written, and nothing is logged as an error', async () => {
  const rows: UsageRow[] = [];
  const log = notingLog();
  await record({ log, prices, rowWriter: new RowWriter(storing(rows), new FileRowSpool(join(dir, 'spool'), log)) });
  expect(rows.map((row) => row.id)).toEqual(['req-record-1']);
  expect(log.errors).toEqual([]);
});

test('a row that could not be built is logged as an error with its request id', async () => {
  const rows: UsageRow[] = [];
  const log = notingLog();
  // The real table, but its pricing fails.
  const unpriceable = Object.create(prices, {
    cost: {
      value: () => {
        throw new Error('no price could be read');
      },
    },
  }) as PriceTable;
  await record({
    log,
    prices: unpriceable,
    rowWriter: new RowWriter(storing(rows), new FileRowSpool(join(dir, 'spool'), log)),
  });
  expect(rows).toEqual([]);
  expect(log.errors).toEqual([
    {
      message: 'usage row not recorded',
      fields: expect.objectContaining({ request_id: 'req-record-1', detail: 'no price could be read' }),
    },
  ]);
});

test('a row that neither the store nor the spool took is logged as an error with its request id', async () => {
  jest.useFakeTimers();
  try {
    const log = notingLog();
    // The spool's folder is a file: the spool can't keep the row.
    const blocked = join(dir, 'not-a-folder');
    writeFileSync(blocked, '');
    const recorded = record({
      log,
      prices,
      rowWriter: new RowWriter(refusing, new FileRowSpool(join(blocked, 'spool.jsonl'), log)),
    });
    // The row writer's retries and their waits (lambda/base/retry.ts, `rowWrite`) run out within 13 s.
    await jest.advanceTimersByTimeAsync(15_000);
    await recorded;
    expect(log.errors).toEqual([
      { message: 'usage row not recorded', fields: expect.objectContaining({ request_id: 'req-record-1' }) },
    ]);
    // Why the spool refused it (the file system's own error, however the runtime wraps it).
    expect(JSON.stringify(log.errors[0].fields)).toMatch(/EEXIST|ENOTDIR/);
  } finally {
    jest.useRealTimers();
  }
});
