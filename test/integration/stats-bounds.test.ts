/**
 * `/api/stats` stays small whatever the number of distinct requester labels and models: any app
 * token can send any `x-proxy-user` and any model id, and each used to add one entry to the
 * account's overview (5,000 labels made it 3.46 MB). Past 100 of each, the rest are one `(other)`
 * entry that still counts them, so the totals stay the exact sums of the rows.
 */
import { randomBytes } from 'node:crypto';
import type { StatsSummary } from '../../lambda/usage/usage-stats';
import { MAX_LISTED_VALUES, OTHER_LABEL } from '../../lambda/usage/rollups/summary';
import type { UsageRow } from '../../lambda/usage/usage-row';
import { foldDistinctValues } from '../support/many-values';
import { startProxy, type ProxyServer } from '../support/proxy-server';

const REQUESTERS = 3_000;
const MODELS = 1_500;
const MAX_ANSWER_BYTES = 200 * 1024;

let proxy: ProxyServer;
let rows: UsageRow[];
let answer: { bytes: number; body: StatsSummary };

beforeAll(async () => {
  const tablePrefix = `p${randomBytes(4).toString('hex')}-`;
  proxy = await startProxy({ tablePrefix });
  rows = await foldDistinctValues(tablePrefix, proxy.account.accountId, { requesters: REQUESTERS, models: MODELS });
  const response = await proxy.api('/api/stats', { token: proxy.account.token });
  expect(response.status).toBe(200);
  const text = await response.text();
  answer = { bytes: Buffer.byteLength(text), body: JSON.parse(text) as StatsSummary };
});

afterAll(async () => {
  await proxy?.stop();
});

const sum = (list: readonly { cost_nanos: number; requests: number; input_tokens: number }[]) => ({
  requests: list.reduce((total, e) => total + e.requests, 0),
  cost_nanos: list.reduce((total, e) => total + e.cost_nanos, 0),
  input_tokens: list.reduce((total, e) => total + e.input_tokens, 0),
});

test('the answer stays under 200 KB with thousands of distinct requesters and models', () => {
  expect(answer.bytes).toBeLessThan(MAX_ANSWER_BYTES);
  expect(answer.body.by_requester).toHaveLength(MAX_LISTED_VALUES + 1);
  expect(answer.body.by_model).toHaveLength(MAX_LISTED_VALUES + 1);
});

test('the totals are still the exact sums of the rows, and the entries add up to them', () => {
  const exact = sum(rows.map((r) => ({ requests: 1, cost_nanos: r.cost_nanos, input_tokens: r.input_tokens })));
  expect(sum([answer.body.totals])).toEqual(exact);
  expect(sum(answer.body.by_requester)).toEqual(exact);
  expect(sum(answer.body.by_model)).toEqual(exact);
});

test('the costliest requesters are listed by name, and (other) sums exactly the rest and says how many', () => {
  const byCost = [...rows].sort((a, b) => b.cost_nanos - a.cost_nanos);
  const listed = answer.body.by_requester.slice(0, MAX_LISTED_VALUES);
  expect(listed.map((e) => e.requester)).toEqual(byCost.slice(0, MAX_LISTED_VALUES).map((r) => r.requester));
  expect(listed.every((e) => e.other === undefined)).toBe(true);
  const other = answer.body.by_requester[MAX_LISTED_VALUES];
  expect(other).toMatchObject({ requester: OTHER_LABEL, other: REQUESTERS - MAX_LISTED_VALUES });
  const rest = byCost.slice(MAX_LISTED_VALUES);
  expect(sum([other])).toEqual(
    sum(rest.map((r) => ({ requests: 1, cost_nanos: r.cost_nanos, input_tokens: r.input_tokens }))),
  );
});

test('models past the cut are one (other) entry that counts them', () => {
  const other = answer.body.by_model[MAX_LISTED_VALUES];
  expect(other).toMatchObject({ model: OTHER_LABEL, provider: '', other: MODELS - MAX_LISTED_VALUES });
  const listed = new Set(answer.body.by_model.slice(0, MAX_LISTED_VALUES).map((e) => e.model));
  expect(listed.size).toBe(MAX_LISTED_VALUES);
  const rest = rows.filter((r) => !listed.has(r.model));
  expect(other.requests).toBe(rest.length);
  expect(other.cost_nanos).toBe(rest.reduce((total, r) => total + r.cost_nanos, 0));
});
