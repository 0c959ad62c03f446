/**
 * The local stream consumer after a trimmed position (docs/operations.md, "Rollups after a long
 * stop"): the rows whose stream records were trimmed while it was stopped still reach the
 * rollups, read from the usage-logs table, and no row is counted twice. The trim is simulated:
 * DynamoDB Local's own Streams API answers everything else, but refuses the saved position with
 * TrimmedDataAccessException and no longer holds the records of the rows written meanwhile. A
 * reader that found the stream empty is not taken for one whose position was trimmed.
 */
import { DynamoDBStreamsClient, type GetRecordsCommandOutput } from '@aws-sdk/client-dynamodb-streams';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OVERFLOW_VALUE } from '../../../lambda/tags/tags';
import { MAX_LISTED_TAG_KEYS, MAX_LISTED_TAG_VALUES } from '../../../lambda/usage/rollups/summary';
import { OTHER_LABEL } from '../../../lambda/usage/rollups/summary';
import { rebuildRollups } from '../../../lambda/local/rollup-rebuild';
import { StreamPoller } from '../../../lambda/local/stream-poller';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { SMALL_DAILY_CAPS as CAPS } from '../../support/small-caps';
import { createTestTables } from '../../support/tables';

const ACCOUNT = 'acc-trimmed';
const AT = Date.parse('2026-11-20T23:20:00Z');

function row(i: number): UsageRow {
  return {
    account_id: ACCOUNT,
    id: `req-trim-${String(i).padStart(3, '0')}`,
    // Across a day boundary, so both hour and day rollups of two days are rebuilt.
    ts: new Date(AT + i * 7 * 60_000).toISOString(),
    provider: i % 2 ? 'prov-a' : 'prov-b',
    model: i % 2 ? 'fam-haiku-4-5-20251001' : 'gpt-4.1-mini',
    input_tokens: 100 + i,
    output_tokens: 10 * i,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_nanos: 1_000 * (i + 1),
    cost_usd: (1_000 * (i + 1)) / 1e9,
    priced: true,
    latency_ms: 100 + 50 * i,
    status_code: i === 4 ? 500 : 200,
    cached: false,
    saved_nanos: 0,
    saved_usd: 0,
    stream: false,
    mode: 'stored',
    token_id: 'tok-trim',
    kind: 'chat',
  };
}

/** Sixteen writes at a time: a rebuild reads the table, not the order the rows arrived in. */
async function writeRows(log: DynamoUsageLog, rows: readonly UsageRow[]): Promise<void> {
  for (let first = 0; first < rows.length; first += 16)
    await Promise.all(rows.slice(first, first + 16).map((r) => log.write(r)));
}

/** The Streams API of the worker's DynamoDB Local. */
const localStreams = () =>
  new DynamoDBStreamsClient({
    region: 'eu-west-1',
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** The error DynamoDB Streams answers a position past its trim horizon with. */
const trimmedError = () =>
  Object.assign(new Error('The requested sequence number is beyond the trim horizon'), {
    name: 'TrimmedDataAccessException',
  });

/** DynamoDB Local's Streams API, except that the stream has lost what `trim` names. */
function trimmedStreams(
  real: DynamoDBStreamsClient,
  trim: { position: boolean; lostIds: Set<string> },
): DynamoDBStreamsClient {
  return {
    send: async (command: { constructor: { name: string }; input: { ShardIteratorType?: string } }) => {
      if (
        trim.position &&
        command.constructor.name === 'GetShardIteratorCommand' &&
        command.input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER'
      ) {
        throw trimmedError();
      }
      const answer = (await real.send(command as never)) as GetRecordsCommandOutput;
      if (command.constructor.name !== 'GetRecordsCommand') return answer;
      return {
        ...answer,
        Records: (answer.Records ?? []).filter((record) => !trim.lostIds.has(String(record.dynamodb?.NewImage?.id?.S))),
      };
    },
  } as unknown as DynamoDBStreamsClient;
}

let created: Awaited<ReturnType<typeof createTestTables>>;
let dataDir: string;
beforeAll(async () => {
  created = await createTestTables();
  dataDir = mkdtempSync(join(tmpdir(), 'trimmed-'));
});
afterAll(() => {
  created.clients.raw.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

test('rows whose stream records were trimmed are rebuilt into the rollups from the usage-logs table, each counted once', async () => {
  const real = localStreams();
  const log = new DynamoUsageLog(created.clients.doc, created.tables.usageLogs);
  const stats = new DynamoUsageStats(created.clients.doc, created.tables.usageStats);
  const trim = { position: false, lostIds: new Set<string>() };
  const poller = () =>
    new StreamPoller({
      raw: created.clients.raw,
      streams: trimmedStreams(real, trim),
      table: created.tables.usageLogs,
      stats,
      checkpointFile: join(dataDir, 'stream-checkpoints.json'),
      log: silent,
      rebuild: (since) =>
        rebuildRollups({
          raw: created.clients.raw,
          logsTable: created.tables.usageLogs,
          statsTable: created.tables.usageStats,
          since,
          stats,
        }),
    });
  const rows = Array.from({ length: 12 }, (_, i) => row(i));
  const totals = async () =>
    (await stats.summarize(ACCOUNT, new Date(AT - 86_400_000), new Date(AT + 2 * 86_400_000))).totals;
  const sum = (some: UsageRow[]) => ({
    requests: some.length,
    input_tokens: some.reduce((t, r) => t + r.input_tokens, 0),
    output_tokens: some.reduce((t, r) => t + r.output_tokens, 0),
    cost_nanos: some.reduce((t, r) => t + r.cost_nanos, 0),
    errors: some.filter((r) => r.status_code >= 400).length,
  });

  // Before the stop: four rows, folded and checkpointed.
  for (const r of rows.slice(0, 4)) await log.write(r);
  await poller().catchUp();
  expect(await totals()).toMatchObject(sum(rows.slice(0, 4)));

  // While stopped: five rows whose records the stream then trims, and the saved position with them.
  for (const r of rows.slice(4, 9)) await log.write(r);
  for (const r of rows.slice(4, 9)) trim.lostIds.add(r.id);
  trim.position = true;
  // After the restart: three more rows, which the stream still holds.
  for (const r of rows.slice(9)) await log.write(r);

  const restarted = poller();
  await restarted.catchUp();
  expect(await totals()).toMatchObject(sum(rows));
  expect(JSON.parse(readFileSync(join(dataDir, 'stream-checkpoints.json'), 'utf8'))['rebuild-since']).toBeUndefined();
  // Per day and per hour too: the rebuild completed every bucket the lost rows count in.
  const summary = await stats.summarize(ACCOUNT, new Date(AT - 86_400_000), new Date(AT + 2 * 86_400_000));
  expect(summary.by_model.map((m) => [m.model, m.requests]).sort()).toEqual([
    ['fam-haiku-4-5-20251001', rows.filter((_, i) => i % 2).length],
    ['gpt-4.1-mini', rows.filter((_, i) => i % 2 === 0).length],
  ]);

  const perDay = new Map<string, number>();
  for (const r of rows) perDay.set(r.ts.slice(0, 10), (perDay.get(r.ts.slice(0, 10)) ?? 0) + 1);
  expect(summary.by_day.filter((d) => d.requests > 0).map((d) => [d.day, d.requests])).toEqual([...perDay]);

  // Reading again, or another trimmed start over the same rows, counts nothing twice.
  trim.position = false;
  await restarted.catchUp();
  trim.position = true;
  await poller().catchUp();
  expect(await totals()).toMatchObject(sum(rows));
  real.destroy();
});

test('a rebuild counts tags under the same per-day caps as the fold: more tag values and keys than the caps, rebuilt rollups equal folded ones', async () => {
  const day = Date.parse('2026-11-22T08:00:00Z');
  const values = CAPS.tagValues + 10;
  const keys = CAPS.tagKeys + 5;
  // Each row: a value of `run` never seen before, one of more keys than the cap, and a shared team.
  const tagged = (accountId: string, i: number): UsageRow => ({
    ...row(i),
    account_id: accountId,
    id: `req-cap-${accountId}-${String(i).padStart(3, '0')}`,
    ts: new Date(day + i * 1_000).toISOString(),
    tags: { run: `r${i}`, [`k${i % keys}`]: 'v', team: i % 2 ? 'search' : 'ads' },
  });
  const count = Math.max(values, keys);
  const folded = Array.from({ length: count }, (_, i) => tagged('acc-cap-fold', i));
  const rebuilt = Array.from({ length: count }, (_, i) => tagged('acc-cap-rebuild', i));
  // Small caps (test/support/small-caps.ts): the rebuild applies those of the stats it is given.
  const stats = new DynamoUsageStats(created.clients.doc, created.tables.usageStats, Date.now, { caps: CAPS });

  // The stream consumer's fold, the rows in the order they were written.
  const outcome = await stats.fold(
    folded.map((r, i) => ({ row: r, lineage: 'shard-cap', sequence: String(i + 1).padStart(21, '0') })),
  );
  expect(outcome.failed).toEqual([]);
  // The same rows, for another account, known to the rollups only through a rebuild from the table.
  const log = new DynamoUsageLog(created.clients.doc, created.tables.usageLogs);
  await writeRows(log, rebuilt);
  await rebuildRollups({
    raw: created.clients.raw,
    logsTable: created.tables.usageLogs,
    statsTable: created.tables.usageStats,
    since: new Date(day),
    stats,
  });

  const summary = (accountId: string) =>
    stats.summarize(accountId, new Date(day - 3_600_000), new Date(day + 86_400_000));
  const [folds, rebuilds] = await Promise.all([summary('acc-cap-fold'), summary('acc-cap-rebuild')]);
  const [fromFold, fromRebuild] = [folds.by_tag, rebuilds.by_tag];
  // The caps held: the first keys and, per key, the first values kept, the later values under (other).
  // The answer lists the costliest of the kept keys and values; (other) sums the rest, and says it holds values past the cap.
  expect(Object.keys(fromFold)).toHaveLength(MAX_LISTED_TAG_KEYS);
  expect(folds.tag_keys_not_listed).toBe(CAPS.tagKeys - MAX_LISTED_TAG_KEYS);
  expect(Object.keys(fromFold.run)).toHaveLength(MAX_LISTED_TAG_VALUES + 1);
  expect(fromFold.run[OVERFLOW_VALUE]).toMatchObject({
    requests: count - MAX_LISTED_TAG_VALUES,
    other: CAPS.tagValues - MAX_LISTED_TAG_VALUES,
    past_daily_cap: true,
  });
  const kept = new Set(Array.from({ length: CAPS.tagValues }, (_, i) => `r${i}`));
  expect(Object.keys(fromFold.run).every((value) => value === OVERFLOW_VALUE || kept.has(value))).toBe(true);
  expect(fromFold.team.search.requests + fromFold.team.ads.requests).toBe(count);
  expect(fromRebuild).toEqual(fromFold);
  expect(rebuilds.tag_keys_not_listed).toBe(folds.tag_keys_not_listed);
});

test('a rebuild counts requesters and models under the same per-day caps as the fold: rebuilt rollups equal folded ones', async () => {
  const day = Date.parse('2026-11-23T08:00:00Z');
  // Caps below what a summary lists: every name kept is listed, so the summary shows which were kept.
  const caps = { ...CAPS, requesters: 20, models: 15 };
  const count = caps.requesters + 20;
  const models = caps.models + 10;
  const labelled = (accountId: string, i: number): UsageRow => ({
    ...row(i),
    account_id: accountId,
    id: `req-label-${accountId}-${String(i).padStart(3, '0')}`,
    ts: new Date(day + i * 1_000).toISOString(),
    model: `m${i % models}`,
    requester: `u${i}`,
  });
  const stats = new DynamoUsageStats(created.clients.doc, created.tables.usageStats, Date.now, { caps });
  const outcome = await stats.fold(
    Array.from({ length: count }, (_, i) => ({
      row: labelled('acc-label-fold', i),
      lineage: 'shard-label',
      sequence: String(i + 1).padStart(21, '0'),
    })),
  );
  expect(outcome.failed).toEqual([]);
  const log = new DynamoUsageLog(created.clients.doc, created.tables.usageLogs);
  await writeRows(
    log,
    Array.from({ length: count }, (_, i) => labelled('acc-label-rebuild', i)),
  );
  await rebuildRollups({
    raw: created.clients.raw,
    logsTable: created.tables.usageLogs,
    statsTable: created.tables.usageStats,
    since: new Date(day),
    stats,
  });

  const summary = (accountId: string) =>
    stats.summarize(accountId, new Date(day - 3_600_000), new Date(day + 86_400_000));
  const [fromFold, fromRebuild] = await Promise.all([summary('acc-label-fold'), summary('acc-label-rebuild')]);
  // The caps held: the first requesters and models kept, those past them counted under (other), named nowhere.
  // (A model is listed once per provider that served it.)
  const named = (list: { requester?: string; model?: string }[]) => [
    ...new Set(list.map((entry) => entry.requester ?? entry.model).filter((name) => name !== OTHER_LABEL)),
  ];
  const first = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).sort();
  expect(named(fromFold.by_requester).sort()).toEqual(first('u', caps.requesters));
  expect(named(fromFold.by_model).sort()).toEqual(first('m', caps.models));
  expect(fromFold.totals.requests).toBe(count);
  expect(fromRebuild.by_requester).toEqual(fromFold.by_requester);
  expect(fromRebuild.by_model).toEqual(fromFold.by_model);
  expect(fromRebuild.totals).toEqual(fromFold.totals);
});

test('a reader whose first read found the stream empty folds the rows written next in its following round, with no warning: DynamoDB Local may refuse that first iterator once records arrive, though none were trimmed', async () => {
  const fresh = await createTestTables();
  const real = localStreams();
  try {
    const warnings: string[] = [];
    const streams = refusingEmptyShardIterators(real);
    const poller = new StreamPoller({
      raw: fresh.clients.raw,
      streams: streams.client,
      table: fresh.tables.usageLogs,
      stats: new DynamoUsageStats(fresh.clients.doc, fresh.tables.usageStats),
      checkpointFile: join(dataDir, 'fresh-stream-checkpoints.json'),
      log: { ...silent, warn: (message) => warnings.push(message) },
    });
    await expect(poller.pollOnce()).resolves.toBe(0);
    await writeRows(new DynamoUsageLog(fresh.clients.doc, fresh.tables.usageLogs), [row(0), row(1)]);
    streams.recordsArrived();
    await expect(poller.pollOnce()).resolves.toBe(2);
    expect(streams.refused).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
  } finally {
    real.destroy();
    fresh.clients.raw.destroy();
  }
});

/**
 * DynamoDB Local's Streams API, refusing as it does (in most runs, a few seconds after) every
 * iterator it gave while the shard was empty once records have arrived: with TrimmedDataAccessException,
 * though nothing was trimmed. Played here so that the reader meets it in every run.
 */
function refusingEmptyShardIterators(real: DynamoDBStreamsClient): {
  client: DynamoDBStreamsClient;
  recordsArrived: () => void;
  readonly refused: number;
} {
  const givenWhileEmpty = new Set<string>();
  let arrived = false;
  let refused = 0;
  const client = {
    send: async (command: { constructor: { name: string }; input: { ShardIterator?: string } }) => {
      const iterator = command.input.ShardIterator;
      if (arrived && command.constructor.name === 'GetRecordsCommand' && iterator && givenWhileEmpty.has(iterator)) {
        refused++;
        throw trimmedError();
      }
      const answer = (await real.send(command as never)) as { ShardIterator?: string; NextShardIterator?: string };
      const given = answer.ShardIterator ?? answer.NextShardIterator;
      if (!arrived && given) givenWhileEmpty.add(given);
      return answer;
    },
  } as unknown as DynamoDBStreamsClient;
  return {
    client,
    recordsArrived: () => (arrived = true),
    get refused() {
      return refused;
    },
  };
}
