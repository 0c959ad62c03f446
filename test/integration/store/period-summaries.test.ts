// The kept sums of past hours and days (usage/dynamodb/period-summaries.ts): kept only once sealed,
// never missing a row whose fold finished, summed again after a late row.
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import { SEAL_MARGIN_MS } from '../../../lambda/usage/dynamodb/period-summaries';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { DAY, HOUR, addAll, makeRow, statsOnFreshTables } from './support/usage-stats-rows';

const store = statsOnFreshTables();

/** The store client, counting queries and the writes of kept sums (by key), and able to hold those writes back. */
function watched(inner: DocumentClient, beforeKeeping?: () => Promise<void>) {
  const seen = { queries: 0, kept: 0, keys: [] as string[] };
  const doc: DocumentClient = {
    send: async <C extends StoreCommand>(command: C) => {
      if (command.operation === 'Query') seen.queries++;
      if (keepsSums(command)) {
        seen.kept++;
        seen.keys.push((command.input as unknown as { Key: { bucket: string } }).Key.bucket);
        await beforeKeeping?.();
      }
      return inner.send(command);
    },
  };
  return { doc, seen };
}

/** A write of kept sums (not a stale mark). */
function keepsSums(command: StoreCommand): boolean {
  const values = (command.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues;
  return command.operation === 'UpdateItem' && values?.[':sums'] !== undefined;
}

const hourStart = Date.parse('2026-06-01T10:00:00Z');
const period = [new Date(hourStart), new Date(hourStart + HOUR)] as const;
/** Folds as a consumer would during the hour's last minutes: its rows counted, its sums not yet kept. */
const foldingInTheHour = () => new DynamoUsageStats(store.doc, store.table, () => hourStart + 50 * 60_000);
/** Folds as a consumer would after the hour ended, before it is sealed: late rows mark it stale. */
const foldingLate = () => new DynamoUsageStats(store.doc, store.table, () => hourStart + HOUR + 60_000);

it('sums an hour from its rollup items until it is sealed, then keeps its sums and reads only them', async () => {
  await addAll(foldingInTheHour(), [makeRow('acc-seal', hourStart + 30 * 60_000, { cost_nanos: 9 })]);
  const readAt = async (now: number) => {
    const { doc, seen } = watched(store.doc);
    const summary = await new DynamoUsageStats(doc, store.table, () => now).summarize('acc-seal', ...period);
    return { totals: summary.totals, ...seen };
  };
  const justEnded = hourStart + HOUR + SEAL_MARGIN_MS - 1;
  // Not sealed yet: a row of it may still be on its way, so nothing is kept.
  expect(await readAt(justEnded)).toMatchObject({ totals: { requests: 1, cost_nanos: 9 }, queries: 1, kept: 0 });
  expect(await readAt(justEnded)).toMatchObject({ queries: 1, kept: 0 });
  // Sealed: summed once more from its items and kept, then read from what was kept.
  const sealed = hourStart + HOUR + SEAL_MARGIN_MS;
  expect(await readAt(sealed)).toMatchObject({ totals: { requests: 1, cost_nanos: 9 }, queries: 2, kept: 1 });
  expect(await readAt(sealed)).toMatchObject({ totals: { requests: 1, cost_nanos: 9 }, queries: 1, kept: 0 });
});

it('never keeps sums that miss a row folded while they were being summed', async () => {
  const account = 'acc-race';
  await addAll(foldingInTheHour(), [makeRow(account, hourStart + 5 * 60_000, { cost_nanos: 1 })]);
  expect((await store.stats.summarize(account, ...period)).totals.requests).toBe(1);

  // A late row marks the kept sums stale; a read starts summing the hour again, and before it can
  // keep the new sums, another late row is folded.
  await addAll(foldingLate(), [makeRow(account, hourStart + 6 * 60_000, { cost_nanos: 10 })]);
  let folded = false;
  const { doc } = watched(store.doc, async () => {
    if (folded) return;
    folded = true;
    await addAll(foldingLate(), [makeRow(account, hourStart + 7 * 60_000, { cost_nanos: 100 })]);
  });
  const racing = await new DynamoUsageStats(doc, store.table).summarize(account, ...period);
  expect(folded).toBe(true);
  // That read summed what had been folded when it read the items...
  expect(racing.totals).toMatchObject({ requests: 2, cost_nanos: 11 });
  // ...and could not keep it: the next read sums the hour again, with the last row.
  const { doc: plain, seen } = watched(store.doc);
  const after = await new DynamoUsageStats(plain, store.table).summarize(account, ...period);
  expect(after.totals).toMatchObject({ requests: 3, cost_nanos: 111 });
  expect(seen.kept).toBe(1);
});

it('gives each account its own kept sums', async () => {
  await addAll(store.stats, [
    makeRow('acc-own-1', hourStart + 60_000, { cost_nanos: 3 }),
    makeRow('acc-own-2', hourStart + 60_000, { cost_nanos: 4 }),
  ]);
  for (let round = 0; round < 2; round++) {
    expect((await store.stats.summarize('acc-own-1', ...period)).totals.cost_nanos).toBe(3);
    expect((await store.stats.summarize('acc-own-2', ...period)).totals.cost_nanos).toBe(4);
    expect((await store.stats.summarize('acc-own-3', ...period)).totals.requests).toBe(0);
  }
});

it('answers even when the sums cannot be kept (a write refused by IAM or throttled), and says so', async () => {
  await addAll(foldingInTheHour(), [makeRow('acc-refused', hourStart + 60_000, { cost_nanos: 8 })]);
  const refused = Object.assign(new Error('not authorized to perform: dynamodb:UpdateItem'), {
    name: 'AccessDeniedException',
  });
  const doc: DocumentClient = {
    send: async <C extends StoreCommand>(command: C) => {
      const key = (command.input as { Key?: { bucket?: string } }).Key;
      if (command.operation === 'UpdateItem' && key?.bucket?.startsWith('SUM#')) throw refused;
      return store.doc.send(command);
    },
  };
  const stats = new DynamoUsageStats(doc, store.table);
  const notKept: unknown[] = [];
  stats.onSumsNotKept = (error) => notKept.push(error);
  for (let read = 1; read <= 2; read++) {
    expect((await stats.summarize('acc-refused', ...period)).totals).toMatchObject({ requests: 1, cost_nanos: 8 });
    expect(notKept).toEqual(Array.from({ length: read }, () => refused));
  }
});

it('keeps, at its next batch of the account, the sums of each hour and day the fold counted rows in once sealed: their first read reads only those', async () => {
  const account = 'acc-fold-keeps';
  const day = Date.parse('2026-06-01T00:00:00Z');
  let now = day;
  const { doc, seen } = watched(store.doc);
  const folding = new DynamoUsageStats(doc, store.table, () => now);
  let cost = 1;
  const foldAt = async (at: number) => {
    now = at;
    await addAll(folding, [makeRow(account, at, { cost_nanos: cost })]);
    cost *= 2;
  };
  await foldAt(day + 10 * HOUR);
  expect(seen.keys).toEqual([]);
  // Its hour has sealed, its day not yet.
  await foldAt(day + 11 * HOUR + SEAL_MARGIN_MS);
  expect(seen.keys).toEqual(['SUM#H#2026-06-01T10']);
  await foldAt(day + DAY + 3 * HOUR);
  await foldAt(day + 2 * DAY + 3 * HOUR);
  await foldAt(day + 3 * DAY + SEAL_MARGIN_MS);
  expect(seen.keys.sort()).toEqual([
    'SUM#D#2026-06-01',
    'SUM#D#2026-06-02',
    'SUM#D#2026-06-03',
    'SUM#H#2026-06-01T10',
    'SUM#H#2026-06-01T11',
    'SUM#H#2026-06-02T03',
    'SUM#H#2026-06-03T03',
  ]);

  // Nobody has read those days yet: the first read of them reads the kept sums alone, in one query.
  const reader = watched(store.doc);
  const summary = await new DynamoUsageStats(reader.doc, store.table, () => now).summarize(
    account,
    new Date(day),
    new Date(day + 3 * DAY),
  );
  expect(summary.totals).toMatchObject({ requests: 4, cost_nanos: 1 + 2 + 4 + 8 });
  expect(reader.seen).toMatchObject({ queries: 1, kept: 0 });
});

it("keeps the sums of an account gone quiet at the fold's next batch of anyone's rows", async () => {
  let now = hourStart + 20 * 60_000;
  const { doc, seen } = watched(store.doc);
  const folding = new DynamoUsageStats(doc, store.table, () => now);
  await addAll(folding, [makeRow('acc-gone-quiet', now, { cost_nanos: 3 })]);
  now = hourStart + DAY;
  await addAll(folding, [makeRow('acc-still-busy', now, { cost_nanos: 4 })]);
  expect(seen.keys.sort()).toEqual(['SUM#D#2026-06-01', 'SUM#H#2026-06-01T10']);
  const reader = watched(store.doc);
  const summary = await new DynamoUsageStats(reader.doc, store.table, () => now).summarize('acc-gone-quiet', ...period);
  expect(summary.totals).toMatchObject({ requests: 1, cost_nanos: 3 });
  expect(reader.seen).toMatchObject({ queries: 1, kept: 0 });
});

it('leaves the last day of an account gone quiet to its first read while no rows arrive, and that read keeps it', async () => {
  const account = 'acc-quiet';
  await addAll(foldingInTheHour(), [makeRow(account, hourStart + 20 * 60_000, { cost_nanos: 6 })]);
  const { doc, seen } = watched(store.doc);
  const readAt = hourStart + 5 * DAY;
  const period = [new Date(hourStart - 10 * HOUR), new Date(hourStart + 4 * DAY - 10 * HOUR)] as const;
  const summary = await new DynamoUsageStats(doc, store.table, () => readAt).summarize(account, ...period);
  expect(summary.totals).toMatchObject({ requests: 1, cost_nanos: 6 });
  // Four days, every one of them sealed: each summed once and kept, the one with the row among them.
  expect(seen.keys.sort()).toEqual(['SUM#D#2026-06-01', 'SUM#D#2026-06-02', 'SUM#D#2026-06-03', 'SUM#D#2026-06-04']);
});

it('folds every row when the sums cannot be kept, and says so', async () => {
  const refused = Object.assign(new Error('Throughput exceeds the current capacity'), {
    name: 'ProvisionedThroughputExceededException',
  });
  const doc: DocumentClient = {
    send: async <C extends StoreCommand>(command: C) => {
      if (keepsSums(command)) throw refused;
      return store.doc.send(command);
    },
  };
  const folding = new DynamoUsageStats(doc, store.table, () => hourStart + HOUR + SEAL_MARGIN_MS);
  const notKept: unknown[] = [];
  folding.onSumsNotKept = (error) => notKept.push(error);
  // The row's hour is sealed by the fold's clock: it tries to keep its sums at once.
  await addAll(folding, [makeRow('acc-fold-refused', hourStart + 60_000, { cost_nanos: 5 })]);
  expect(notKept).toEqual([refused]);
  expect((await store.stats.summarize('acc-fold-refused', ...period)).totals).toMatchObject({
    requests: 1,
    cost_nanos: 5,
  });
});
