/**
 * The consumer Lambda's handler, fed the usage-logs stream's real records
 * (read from DynamoDB Local's Streams API, in the shape Lambda's event source
 * mapping delivers them), delivered again whole and bisected as Lambda does
 * after an error: the rollups equal the rows, once.
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { DynamoBudgetStore } from '../../../lambda/budgets/dynamodb/budget-store';
import type { BudgetSubject } from '../../../lambda/budgets/budget';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createTestTables } from '../../support/tables';
import { emfProblems } from '../../support/emf-specification';
import { streamEvent } from './support/consumer-bundle';

type Answer = { batchItemFailures: Array<{ itemIdentifier: string }> };

let created: Awaited<ReturnType<typeof createTestTables>>;
/** The Embedded Metric Format lines the bundle wrote beside its answers (docs/alerts.md, "Metrics"). */
const metricLines: string[] = [];

/** Runs the built bundle in its own Node process (npm test builds it first), one invocation per event. */
function invokeBundle(events: Array<DynamoDBStreamEvent & { shardId?: string }>): Answer[] {
  const host = join(__dirname, 'support/invoke-consumer.mjs');
  const result = spawnSync(process.execPath, [host], {
    input: events.map((event) => JSON.stringify(event)).join('\n') + '\n',
    env: { ...process.env, TABLE_PREFIX: created.prefix, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`consumer bundle failed: ${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  metricLines.push(...lines.filter((line) => line.includes('"_aws"')));
  return lines.filter((line) => !line.includes('"_aws"')).map((line) => JSON.parse(line) as Answer);
}
const AT = Date.parse('2026-11-22T08:30:00Z');
const ACCOUNT = 'acc-consumer';

function row(i: number): UsageRow {
  return {
    account_id: ACCOUNT,
    id: `req-${i}`,
    ts: new Date(AT + i * 60_000).toISOString(),
    provider: i % 2 ? 'prov-a' : 'prov-c',
    model: i % 2 ? 'fam-haiku-4-5-20251001' : 'fam-2.5-flash',
    input_tokens: 100 + i,
    output_tokens: 7 * i,
    cache_read_tokens: i,
    cache_write_tokens: 0,
    cost_nanos: 12_345 * (i + 1),
    cost_usd: (12_345 * (i + 1)) / 1e9,
    priced: true,
    latency_ms: 250,
    requester: i % 3 ? 'team-x' : undefined,
    status_code: 200,
    cached: false,
    saved_nanos: 0,
    saved_usd: 0,
    stream: i % 2 === 0,
    mode: 'stored',
    token_id: 'tok-1',
    kind: 'chat',
  };
}

beforeAll(async () => {
  created = await createTestTables();
});
afterAll(() => created.clients.raw.destroy());

test('the consumer folds the stream into rollups and spend equal to the rows, and a redelivered or bisected batch changes nothing', async () => {
  const log = new DynamoUsageLog(created.clients.doc, created.tables.usageLogs);
  const rows = Array.from({ length: 12 }, (_, i) => row(i));
  for (const r of rows) await log.write(r);
  // The same row written again (a retry after a lost answer) is a MODIFY, not a new request.
  await log.write(rows[0]!);

  const event = await streamEvent(created.clients.raw, created.tables.usageLogs);
  expect(event.Records.filter((r) => r.eventName === 'INSERT')).toHaveLength(rows.length);
  // Delivered, delivered again whole, then as the two halves bisect-on-error would make.
  const half = Math.floor(event.Records.length / 2);
  const answers = invokeBundle([
    event,
    event,
    { ...event, Records: event.Records.slice(0, half) },
    { ...event, Records: event.Records.slice(half) },
  ]);
  expect(answers.map((answer) => answer.batchItemFailures)).toEqual([[], [], [], []]);

  const stats = new DynamoUsageStats(created.clients.doc, created.tables.usageStats);
  const summary = await stats.summarize(ACCOUNT, new Date(AT - 3_600_000), new Date(AT + 3_600_000));
  const sum = (pick: (r: UsageRow) => number) => rows.reduce((total, r) => total + pick(r), 0);
  expect(summary.totals).toMatchObject({
    requests: rows.length,
    input_tokens: sum((r) => r.input_tokens),
    output_tokens: sum((r) => r.output_tokens),
    cache_read_tokens: sum((r) => r.cache_read_tokens),
    cost_nanos: sum((r) => r.cost_nanos),
  });
  expect(summary.by_requester.map((r) => [r.requester, r.requests]).sort()).toEqual([
    ['', rows.filter((r) => !r.requester).length],
    ['team-x', rows.filter((r) => r.requester).length],
  ]);

  // The same batches fold the budgets' spend, each row once.
  const budgets = new DynamoBudgetStore(created.clients.doc, created.tables.accounts, created.tables.rateLimits);
  const spent = async (subject: BudgetSubject) => {
    await budgets.setBudget(ACCOUNT, subject, { limitNanos: 10 ** 15, period: 'total' }, 'x');
    return (await budgets.statusOf(ACCOUNT, subject, AT))!.spentNanos;
  };
  expect(await spent({ kind: 'token', tokenId: 'tok-1' })).toBe(sum((r) => r.cost_nanos));
  expect(await spent({ kind: 'requester', requester: 'team-x' })).toBe(
    rows.filter((r) => r.requester).reduce((total, r) => total + r.cost_nanos, 0),
  );
});

test('the bundle writes Embedded Metric Format lines for each row once, over all four deliveries, at the row’s own minute', () => {
  expect(metricLines.length).toBeGreaterThan(0);
  for (const line of metricLines) expect(emfProblems(line)).toEqual([]);
  const docs = metricLines.map(
    (line) => JSON.parse(line) as { Provider: string; Requests: number; _aws: { Timestamp: number } },
  );
  expect([...new Set(docs.map((d) => d.Provider))].sort()).toEqual(['prov-a', 'prov-c']);
  // The batch was delivered whole, again whole, then bisected: the rows counted once, as the rollups did.
  expect(docs.reduce((total, d) => total + d.Requests, 0)).toBe(12);
  // Each row sits in its own minute (AT + i minutes): each line carries that minute, not the time of writing.
  expect(docs.map((d) => d._aws.Timestamp).sort((a, b) => a - b)).toEqual(
    Array.from({ length: 12 }, (_, i) => AT + i * 60_000),
  );
});
