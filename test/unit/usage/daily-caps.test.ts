/**
 * The stats' daily caps are one value a `DynamoUsageStats` may be given (tests fold past smaller
 * ones with fewer rows): the product's are these numbers (docs/management-api.md, "Bounded whatever
 * callers send"; docs/tags.md, "Stats"), and the composition root, for the proxy's reads and for
 * the stream consumer's fold, builds its stats with them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAILY_CAPS } from '../../../lambda/usage/dynamodb/daily-caps';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { loadConfig } from '../../../lambda/wiring/config';
import { buildDeps, buildFoldDeps } from '../../../lambda/wiring/deps';

let dataDir: string;
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'daily-caps-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("the product's caps: 300 requesters, 200 models, 1,000 rollup items, 20 tag keys and 50 values per key a day", () => {
  expect(DAILY_CAPS).toEqual({ requesters: 300, models: 200, combinations: 1_000, tagKeys: 20, tagValues: 50 });
  // Frozen: no caller can change them for everyone.
  expect(Object.isFrozen(DAILY_CAPS)).toBe(true);
});

test('the composition root builds the stats of the proxy and of the stream consumer with the product’s caps', () => {
  // The store is never reached: building the clients connects to nothing.
  const config = loadConfig({ DATA_DIR: dataDir, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' });
  for (const { usageStats } of [buildDeps(config), buildFoldDeps(config)]) {
    expect(usageStats).toBeInstanceOf(DynamoUsageStats);
    expect((usageStats as DynamoUsageStats).caps).toBe(DAILY_CAPS);
  }
});

test('a stats object given no caps applies the product’s', () => {
  const doc = { send: () => Promise.reject(new Error('no store in a unit test')) };
  expect(new DynamoUsageStats(doc, 'usage-stats').caps).toBe(DAILY_CAPS);
  expect(new DynamoUsageStats(doc, 'usage-stats', Date.now, {}).caps).toBe(DAILY_CAPS);
});
