/**
 * The rollups are folded from the usage-logs stream, and a stream delivers at
 * least once: a batch comes again after a timeout, split in halves after an
 * error, extended with newer rows, or read by a second consumer. Every test
 * here redelivers rows and checks that the rollups still equal the rows' sums.
 */
import { randomBytes } from 'node:crypto';
import type { StreamedRow } from '../../../lambda/usage/rollups/fold';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { DAILY_CAPS } from '../../../lambda/usage/dynamodb/daily-caps';
import { MAX_LISTED_TAG_VALUES } from '../../../lambda/usage/rollups/summary';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { CommandOf, StoreCommand } from '../../../lambda/store/dynamodb/commands';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { SMALL_DAILY_CAPS } from '../../support/small-caps';
import { createTestTables } from '../../support/tables';

const AT = Date.parse('2026-11-20T10:00:00Z');
let doc: DocumentClient;
let table: string;
let destroy: () => void;

beforeAll(async () => {
  const { clients, tables } = await createTestTables();
  doc = clients.doc;
  table = tables.usageStats;
  destroy = () => clients.raw.destroy();
});
afterAll(() => destroy());

const account = () => `acc-${randomBytes(4).toString('hex')}`;

/** Rows over two hours, two providers and two requesters, each with its own stream position on `lineage`. */
function streamRows(accountId: string, count: number, lineage = 'shardId-0001', firstPosition = 1): StreamedRow[] {
  return Array.from({ length: count }, (_, i) => {
    const row: UsageRow = {
      account_id: accountId,
      id: `r-${lineage}-${i}`,
      ts: new Date(AT + (i % 2) * 3_600_000 + i * 1_000).toISOString(),
      provider: i % 3 === 0 ? 'prov-a' : 'prov-b',
      model: i % 3 === 0 ? 'fam-sonnet-4-6' : 'fam-4o-mini',
      input_tokens: 10 + i,
      output_tokens: 3 * i,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_nanos: 1_000 + i,
      cost_usd: (1_000 + i) / 1e9,
      priced: true,
      latency_ms: 100 + i,
      requester: i % 4 === 0 ? undefined : 'alice',
      status_code: i % 10 === 9 ? 500 : 200,
      cached: false,
      saved_nanos: 0,
      saved_usd: 0,
      stream: false,
      mode: 'stored',
      token_id: 'tok',
      kind: 'chat',
    };
    // Real sequence numbers are 21+ digit strings; the width varies, which the fold must order numerically.
    return { row, lineage, sequence: String(10n ** 20n + BigInt(firstPosition + i * 7)) };
  });
}

async function totalsOf(stats: DynamoUsageStats, accountId: string) {
  const summary = await stats.summarize(accountId, new Date(AT - 86_400_000), new Date(AT + 86_400_000));
  const t = summary.totals;
  return {
    requests: t.requests,
    input: t.input_tokens,
    output: t.output_tokens,
    cost: t.cost_nanos,
    errors: t.errors,
    requesters: summary.by_requester.length,
  };
}

function expected(rows: StreamedRow[]) {
  const sum = (pick: (row: UsageRow) => number) => rows.reduce((total, { row }) => total + pick(row), 0);
  return {
    requests: rows.length,
    input: sum((r) => r.input_tokens),
    output: sum((r) => r.output_tokens),
    cost: sum((r) => r.cost_nanos),
    errors: rows.filter(({ row }) => row.status_code >= 400).length,
    requesters: new Set(rows.map(({ row }) => row.requester ?? '')).size,
  };
}

/** The real client, with a fault injected into chosen rollup writes (the store itself is real). */
function faulty(
  inject: (command: CommandOf<'UpdateItem'>, send: () => Promise<unknown>) => Promise<unknown> | undefined,
): { doc: DocumentClient; writes: number } {
  const state = { writes: 0 };
  const wrapped = {
    send: (async (command: StoreCommand) => {
      if (command.operation === 'UpdateItem') {
        state.writes++;
        const send = () => doc.send(command);
        const injected = inject(command, send);
        if (injected) return injected;
      }
      return doc.send(command as never);
    }) as DocumentClient['send'],
  };
  return {
    doc: wrapped,
    get writes() {
      return state.writes;
    },
  };
}

describe('folding the usage stream into rollups', () => {
  it('costs one write per rollup item per batch, whatever the number of rows', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 90);
    const counting = faulty(() => undefined);
    const stats = new DynamoUsageStats(counting.doc, table);
    expect((await stats.fold(rows)).failed).toEqual([]);
    // 2 hours × (prov-a/sonnet, prov-b/mini) × (no requester, alice) hourly items, and the same combinations daily (one day).
    const items = new Set(
      rows.flatMap(({ row }) => [
        `${row.ts.slice(0, 13)} ${row.provider} ${row.requester}`,
        `${row.ts.slice(0, 10)} ${row.provider} ${row.requester}`,
      ]),
    );
    // And one per requester label, model and rollup item (its dimensions) the day's capped sets
    // admit (then remembered by the instance).
    const admitted = new Set(
      rows.flatMap(({ row }) => [
        `model ${row.model}`,
        ...(row.requester ? [`requester ${row.requester}`] : []),
        `item ${row.provider} ${row.model} ${row.requester} ${row.token_id} ${row.kind}`,
      ]),
    );
    // And, per hour and day of the rows, one write keeping its sums once it has sealed, as these
    // have (period-summaries.ts). Being over, each also gets a stale mark first: rows folded in
    // their own hour, as almost all are, leave none.
    const pastUnits = new Set(rows.flatMap(({ row }) => [row.ts.slice(0, 13), row.ts.slice(0, 10)]));
    expect(counting.writes).toBe(items.size + admitted.size + 2 * pastUnits.size);
    expect(counting.writes).toBeLessThan(rows.length / 3);
    expect(await totalsOf(stats, accountId)).toEqual(expected(rows));
  });

  it('does not count a batch delivered again (a retry after a timeout, or after the answer was lost)', async () => {
    const accountId = account();
    const stats = new DynamoUsageStats(doc, table);
    const rows = streamRows(accountId, 40);
    await stats.fold(rows);
    expect((await stats.fold(rows)).failed).toEqual([]);
    expect((await stats.fold([...rows].reverse())).failed).toEqual([]);
    expect(await totalsOf(stats, accountId)).toEqual(expected(rows));
  });

  it('does not count the halves of a batch split after an error (bisect on error) once the whole batch was counted', async () => {
    const accountId = account();
    const stats = new DynamoUsageStats(doc, table);
    const rows = streamRows(accountId, 40);
    await stats.fold(rows);
    await stats.fold(rows.slice(0, 20));
    await stats.fold(rows.slice(20));
    await stats.fold(rows.slice(5, 15));
    expect(await totalsOf(stats, accountId)).toEqual(expected(rows));
  });

  it('counts only the new rows of a redelivered batch that also carries newer ones', async () => {
    const accountId = account();
    const stats = new DynamoUsageStats(doc, table);
    const rows = streamRows(accountId, 50);
    await stats.fold(rows.slice(0, 30));
    await stats.fold(rows.slice(10, 50));
    expect(await totalsOf(stats, accountId)).toEqual(expected(rows));
  });

  it('reports the rows of a rollup write that failed; delivered again from the earliest, every row is counted once', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 30);
    let failures = 0;
    // The first write to each daily item fails, after the hourly ones may have landed.
    const flaky = faulty((command) => {
      if (String(command.input.Key?.bucket).startsWith('D#') && failures < 2) {
        failures++;
        return Promise.reject(Object.assign(new Error('throttled'), { name: 'InternalServerError' }));
      }
      return undefined;
    });
    const stats = new DynamoUsageStats(flaky.doc, table);
    const { failed } = await stats.fold(rows);
    expect(failed.length).toBeGreaterThan(0);
    // As Lambda does with ReportBatchItemFailures: the batch again, from the earliest failed record on.
    const earliest = rows.findIndex((streamed) => failed.includes(streamed));
    expect((await stats.fold(rows.slice(earliest))).failed).toEqual([]);
    expect(await totalsOf(stats, accountId)).toEqual(expected(rows));
  });

  it('does not count twice when a write landed but its answer was lost and the batch comes again', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 20);
    let lost = 0;
    const losing = faulty((_command, send) => {
      if (lost++ % 2 === 1) return undefined;
      return send().then(() => Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
    });
    const stats = new DynamoUsageStats(losing.doc, table);
    const first = await stats.fold(rows);
    expect(first.failed.length).toBeGreaterThan(0);
    expect((await new DynamoUsageStats(doc, table).fold(rows)).failed).toEqual([]);
    expect(await totalsOf(new DynamoUsageStats(doc, table), accountId)).toEqual(expected(rows));
  });

  it('keeps shards apart: interleaved positions of two shards are both counted', async () => {
    const accountId = account();
    const stats = new DynamoUsageStats(doc, table);
    const shardA = streamRows(accountId, 20, 'shardId-A', 1000);
    const shardB = streamRows(accountId, 20, 'shardId-B', 1).map((s) => ({
      ...s,
      row: { ...s.row, id: `${s.row.id}-b` },
    }));
    await stats.fold(shardA);
    await stats.fold(shardB);
    await stats.fold(shardB.slice(0, 10));
    expect(await totalsOf(stats, accountId)).toEqual(expected([...shardA, ...shardB]));
  });

  it('stays exact with two consumers reading the same shard at the same time, each in its own batches', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 80);
    // Each consumer reads the shard in order, as a shard reader does, but cut into different batches.
    const consume = async (stats: DynamoUsageStats, cuts: number[]) => {
      for (let i = 0; i + 1 < cuts.length; i++) {
        const batch = rows.slice(cuts[i], cuts[i + 1]);
        // A write that lost every round to the other consumer is reported; the batch is read again before moving on.
        while ((await stats.fold(batch)).failed.length) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await Promise.all([
      consume(new DynamoUsageStats(doc, table), [0, 50, 80]),
      consume(new DynamoUsageStats(doc, table), [0, 30, 45, 80]),
    ]);
    expect(await totalsOf(new DynamoUsageStats(doc, table), accountId)).toEqual(expected(rows));
  });
});

describe('tag rollups (docs/tags.md, "Stats")', () => {
  it('count each row under each of its tags, keep 15 values per key and UTC day (small caps), count the rest as (other), and stay exact when redelivered', async () => {
    const accountId = account();
    // Caps just above what a summary lists (test/support/small-caps.ts): past them with 40 rows.
    const caps = SMALL_DAILY_CAPS;
    const withCaps = () => new DynamoUsageStats(doc, table, Date.now, { caps });
    // 35 distinct values of `team` in one UTC day (the rows span two hours of it).
    const rows = streamRows(accountId, 40, 'shardId-tags').map((streamed, i) => ({
      ...streamed,
      row: {
        ...streamed.row,
        tags: { team: i < 6 ? 'search' : `t${String(i).padStart(3, '0')}`, feature: 'autocomplete' },
      },
    }));
    const stats = withCaps();
    expect((await stats.fold(rows)).failed).toEqual([]);
    // A second consumer, which remembers nothing, gets the same answers from the store.
    expect((await withCaps().fold([...rows.slice(20), ...rows.slice(0, 20)])).failed).toEqual([]);

    const summary = await stats.summarize(accountId, new Date(AT), new Date(AT + 3 * 3_600_000));
    const team = summary.by_tag.team;
    // 15 values are kept (whichever the store admitted first), the rest count as (other); the answer
    // lists the 10 costliest kept ones, and (other) sums the rest with the other 5 kept ones.
    expect(Object.keys(team)).toHaveLength(MAX_LISTED_TAG_VALUES + 1);
    const listed = Object.entries(team).filter(([value]) => value !== '(other)');
    expect(listed.every(([value, totals]) => totals.requests === (value === 'search' ? 6 : 1))).toBe(true);
    expect(team['(other)']).toMatchObject({
      other: caps.tagValues - MAX_LISTED_TAG_VALUES,
      past_daily_cap: true,
      requests: 40 - listed.reduce((total, [, totals]) => total + totals.requests, 0),
    });
    const sum = (key: 'requests' | 'cost_nanos' | 'input_tokens') =>
      Object.values(team).reduce((total, totals) => total + totals[key], 0);
    expect(sum('requests')).toBe(40);
    expect(sum('cost_nanos')).toBe(rows.reduce((total, { row }) => total + row.cost_nanos, 0));
    expect(sum('input_tokens')).toBe(rows.reduce((total, { row }) => total + row.input_tokens, 0));
    expect(summary.by_tag.feature).toEqual({
      autocomplete: expect.objectContaining({ requests: 40, cost_nanos: sum('cost_nanos') }),
    });
    // The tag rollups never count in the other breakdowns.
    expect(summary.totals.requests).toBe(40);
  });

  it('keep 20 tag keys per UTC day and leave later keys out of by_tag', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 6, 'shardId-keys').map((streamed, i) => ({
      ...streamed,
      row: {
        ...streamed.row,
        tags: Object.fromEntries(
          Array.from({ length: 10 }, (_, j) => [`k${String(i * 10 + j).padStart(2, '0')}`, 'v']),
        ),
      },
    }));
    const stats = new DynamoUsageStats(doc, table);
    expect((await stats.fold(rows)).failed).toEqual([]);
    const summary = await stats.summarize(accountId, new Date(AT), new Date(AT + 3 * 3_600_000));
    expect(Object.keys(summary.by_tag)).toHaveLength(DAILY_CAPS.tagKeys);
    expect(Object.values(summary.by_tag).every((values) => Object.keys(values).join() === 'v')).toBe(true);
    expect(summary.totals.requests).toBe(6);
  });
});
