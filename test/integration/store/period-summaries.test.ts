// The kept sums of past hours and days (usage/dynamodb/period-summaries.ts): kept only once sealed,
// never missing a row whose fold finished, summed again after a late row.
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import { SEAL_MARGIN_MS } from '../../../lambda/usage/dynamodb/period-summaries';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { HOUR, addAll, makeRow, statsOnFreshTables } from './support/usage-stats-rows';

const store = statsOnFreshTables();

/** The store client, counting queries and the writes of kept sums, and able to hold those writes back. */
function watched(inner: DocumentClient, beforeKeeping?: () => Promise<void>) {
  const seen = { queries: 0, kept: 0 };
  const doc: DocumentClient = {
    send: async <C extends StoreCommand>(command: C) => {
      if (command.operation === 'Query') seen.queries++;
      const key = (command.input as { Key?: { bucket?: string } }).Key;
      if (command.operation === 'UpdateItem' && key?.bucket?.startsWith('SUM#')) {
        seen.kept++;
        await beforeKeeping?.();
      }
      return inner.send(command);
    },
  };
  return { doc, seen };
}

const hourStart = Date.parse('2026-06-01T10:00:00Z');
const period = [new Date(hourStart), new Date(hourStart + HOUR)] as const;

it('sums an hour from its rollup items until it is sealed, then keeps its sums and reads only them', async () => {
  await addAll(store.stats, [makeRow('acc-seal', hourStart + 30 * 60_000, { cost_nanos: 9 })]);
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
  await addAll(store.stats, [makeRow(account, hourStart + 5 * 60_000, { cost_nanos: 1 })]);
  expect((await store.stats.summarize(account, ...period)).totals.requests).toBe(1);

  // A late row marks the kept sums stale; a read starts summing the hour again, and before it can
  // keep the new sums, another late row is folded.
  await addAll(store.stats, [makeRow(account, hourStart + 6 * 60_000, { cost_nanos: 10 })]);
  let folded = false;
  const { doc } = watched(store.doc, async () => {
    if (folded) return;
    folded = true;
    await addAll(store.stats, [makeRow(account, hourStart + 7 * 60_000, { cost_nanos: 100 })]);
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
  await addAll(store.stats, [makeRow('acc-refused', hourStart + 60_000, { cost_nanos: 8 })]);
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
