/**
 * `/api/stats` stays small, and its reads bounded, whatever the number of distinct requester labels
 * and models: any app token can send any `x-proxy-user` and any model id, and each used to add
 * rollup items to the account's overview (5,000 labels made it 3.46 MB). The fold keeps the first
 * requesters and models of a day by name, up to its caps, and counts later ones under `(other)`; the
 * answer lists 100 of each and sums the rest into one `(other)` entry, so the totals stay the exact
 * sums of the rows. The rows are folded under small caps (test/support/small-caps.ts), each still
 * above what the answer lists, so crossing them takes hundreds of rows, not thousands; the local
 * server only reads what was folded.
 */
import { randomBytes } from 'node:crypto';
import type { StoreCommand } from '../../lambda/store/dynamodb/commands';
import type { DocumentClient } from '../../lambda/store/dynamodb/document-client';
import { tableNames } from '../../lambda/store/tables';
import { DynamoUsageStats } from '../../lambda/usage/dynamodb/usage-stats';
import { effectivePeriod, periodUnits } from '../../lambda/usage/rollups/bucket-keys';
import {
  MAX_LISTED_TAG_KEYS,
  MAX_LISTED_TAG_VALUES,
  MAX_LISTED_VALUES,
  OTHER_LABEL,
} from '../../lambda/usage/rollups/summary';
import type { StatsSummary } from '../../lambda/usage/usage-stats';
import type { UsageRow } from '../../lambda/usage/usage-row';
import { foldDistinctValues, storeClient } from '../support/many-values';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { SMALL_DAILY_CAPS as CAPS } from '../support/small-caps';

/** Five times the daily cap on requester labels and three times the one on models: past the caps, more rows add no items. */
const REQUESTERS = 5 * CAPS.requesters;
const MODELS = 3 * CAPS.models;
/** Every row also carries one tag: 25 keys with 24 values each, past both daily caps. */
const TAGS = { keys: 25, values: 24 };
const MAX_ANSWER_BYTES = 200 * 1024;

let proxy: ProxyServer;
let tablePrefix: string;
let rows: UsageRow[];
let answer: { bytes: number; body: StatsSummary };

beforeAll(async () => {
  tablePrefix = `p${randomBytes(4).toString('hex')}-`;
  proxy = await startProxy({ tablePrefix });
  rows = await foldDistinctValues(tablePrefix, proxy.account.accountId, {
    requesters: REQUESTERS,
    models: MODELS,
    tags: TAGS,
    caps: CAPS,
  });
  const response = await proxy.api('/api/stats', { token: proxy.account.token });
  expect(response.status).toBe(200);
  const text = await response.text();
  answer = { bytes: Buffer.byteLength(text), body: JSON.parse(text) as StatsSummary };
}, 300_000);

afterAll(async () => {
  await proxy?.stop();
});

const sum = (list: readonly { cost_nanos: number; requests: number; input_tokens: number }[]) => ({
  requests: list.reduce((total, e) => total + e.requests, 0),
  cost_nanos: list.reduce((total, e) => total + e.cost_nanos, 0),
  input_tokens: list.reduce((total, e) => total + e.input_tokens, 0),
});
const asEntries = (list: readonly UsageRow[]) =>
  list.map((r) => ({ requests: 1, cost_nanos: r.cost_nanos, input_tokens: r.input_tokens }));

/** The rows' requesters the fold keeps by name: the first of the day (foldDistinctValues folds the rows in order). */
const keptRequesters = () => rows.slice(0, CAPS.requesters);

test(`the answer stays under 200 KB with ${REQUESTERS} distinct requesters, ${MODELS} models and ${TAGS.keys} tag keys of ${TAGS.values} values`, () => {
  expect(answer.bytes).toBeLessThan(MAX_ANSWER_BYTES);
  expect(answer.body.by_requester).toHaveLength(MAX_LISTED_VALUES + 1);
  expect(answer.body.by_model).toHaveLength(MAX_LISTED_VALUES + 1);
  // The day kept 21 keys, and 15 values of each; the answer lists the 20 costliest keys, each with its
  // 10 costliest values and (other).
  expect(Object.keys(answer.body.by_tag)).toHaveLength(Math.min(CAPS.tagKeys, MAX_LISTED_TAG_KEYS));
  for (const values of Object.values(answer.body.by_tag)) {
    expect(Object.keys(values)).toHaveLength(MAX_LISTED_TAG_VALUES + 1);
    expect(values[OTHER_LABEL]).toMatchObject({
      other: CAPS.tagValues - MAX_LISTED_TAG_VALUES,
      past_daily_cap: true,
    });
  }
});

test("each listed tag key's values add up to the rows that carry it", () => {
  for (const [key, values] of Object.entries(answer.body.by_tag)) {
    const carrying = rows.filter((r) => r.tags?.[key] !== undefined);
    expect(sum(Object.values(values))).toEqual(sum(asEntries(carrying)));
  }
});

test('the rollup items a summary reads are bounded by the daily caps, not by the distinct values', async () => {
  const counted = countingItems(storeClient());
  const stats = new DynamoUsageStats(counted.doc, tableNames({}, tablePrefix).usageStats);
  const to = new Date();
  const from = new Date(to.getTime() - 7 * 86_400_000);
  await stats.summarize(proxy.account.accountId, from, to);
  // The rows lie within a few minutes: at most two hours (and days). Per hour, one item per kept
  // requester (each with its own model) and, for the rest, one per kept model under `(other)` and one
  // for `(other)` both.
  const hours = new Set(rows.map((r) => r.ts.slice(0, 13))).size;
  // Tag rollups: per kept key, one item per kept value and one for (other).
  const perHour = CAPS.requesters + CAPS.models + 1 + CAPS.tagKeys * (CAPS.tagValues + 1);
  // And one item per past hour or day of the period: its kept sums (usage/dynamodb/period-summaries.ts).
  const units = periodUnits(effectivePeriod(from, to).from, effectivePeriod(from, to).to).length;
  expect(counted.items).toBeGreaterThan(0);
  expect(counted.items).toBeLessThanOrEqual(hours * perHour + units);
  // Fewer than half the distinct values the rows carry.
  expect(counted.items * 2).toBeLessThan(REQUESTERS + MODELS + TAGS.keys * TAGS.values);
});

test('the totals are still the exact sums of the rows, and the entries add up to them', () => {
  const exact = sum(asEntries(rows));
  expect(sum([answer.body.totals])).toEqual(exact);
  expect(sum(answer.body.by_requester)).toEqual(exact);
  expect(sum(answer.body.by_model)).toEqual(exact);
});

test('the costliest kept requesters are listed by name, and (other) sums exactly the rest', () => {
  const byCost = [...keptRequesters()].sort((a, b) => b.cost_nanos - a.cost_nanos);
  const listed = answer.body.by_requester.slice(0, MAX_LISTED_VALUES);
  expect(listed.map((e) => e.requester)).toEqual(byCost.slice(0, MAX_LISTED_VALUES).map((r) => r.requester));
  expect(listed.every((e) => e.other === undefined)).toBe(true);
  const other = answer.body.by_requester[MAX_LISTED_VALUES];
  // `other` counts the values known by name; those past the day's cap were folded without names, and the entry says so.
  expect(other).toMatchObject({
    requester: OTHER_LABEL,
    other: CAPS.requesters - MAX_LISTED_VALUES,
    past_daily_cap: true,
  });
  const listedNames = new Set(listed.map((e) => e.requester));
  expect(sum([other])).toEqual(sum(asEntries(rows.filter((r) => !listedNames.has(r.requester ?? '')))));
});

test('models past the day’s cap and past the cut are one (other) entry that counts them', () => {
  const other = answer.body.by_model[MAX_LISTED_VALUES];
  expect(other).toMatchObject({
    model: OTHER_LABEL,
    provider: '',
    other: CAPS.models - MAX_LISTED_VALUES,
    past_daily_cap: true,
  });
  const listed = new Set(answer.body.by_model.slice(0, MAX_LISTED_VALUES).map((e) => e.model));
  expect(listed.size).toBe(MAX_LISTED_VALUES);
  expect(listed.has(OTHER_LABEL)).toBe(false);
  const rest = rows.filter((r) => !listed.has(r.model));
  expect(other.requests).toBe(rest.length);
  expect(other.cost_nanos).toBe(rest.reduce((total, r) => total + r.cost_nanos, 0));
});

test('past the day’s cap on rollup items, rows count under (other) for both labels: every pair of 17 requesters and 17 models reads at most the cap', async () => {
  const account = await proxy.createAccount('stats-pairs');
  const pairs = await foldDistinctValues(tablePrefix, account.accountId, {
    requesters: 17,
    models: 17,
    pairs: true,
    caps: CAPS,
  });
  expect(pairs.length).toBeGreaterThan(CAPS.combinations);
  const counted = countingItems(storeClient());
  const stats = new DynamoUsageStats(counted.doc, tableNames({}, tablePrefix).usageStats);
  const to = new Date();
  const from = new Date(to.getTime() - 86_400_000);
  const summary = await stats.summarize(account.accountId, from, to);
  // Each pair is one rollup item until the day's cap; after it, one item per hour sums the rest.
  const days = new Set(pairs.map((r) => r.ts.slice(0, 10))).size;
  const hours = new Set(pairs.map((r) => r.ts.slice(0, 13))).size;
  const units = periodUnits(effectivePeriod(from, to).from, effectivePeriod(from, to).to).length;
  expect(counted.items).toBeLessThanOrEqual(days * CAPS.combinations + hours + units);
  expect(counted.items).toBeLessThan(pairs.length);
  const exact = sum(asEntries(pairs));
  expect(sum([summary.totals])).toEqual(exact);
  expect(sum(summary.by_requester)).toEqual(exact);
  expect(sum(summary.by_model)).toEqual(exact);
  expect(summary.by_requester.at(-1)).toMatchObject({ requester: OTHER_LABEL, past_daily_cap: true });
  expect(summary.by_model.at(-1)).toMatchObject({ model: OTHER_LABEL, past_daily_cap: true });
}, 300_000);

/** The store client, counting the items its queries bring back (the rollup items a summary reads). */
function countingItems(inner: DocumentClient): { doc: DocumentClient; readonly items: number } {
  const counter = {
    items: 0,
    doc: {
      send: async <C extends StoreCommand>(command: C) => {
        const output = await inner.send(command);
        const items = (output as { Items?: unknown[] }).Items;
        if (Array.isArray(items)) counter.items += items.length;
        return output;
      },
    } as DocumentClient,
  };
  return counter;
}
