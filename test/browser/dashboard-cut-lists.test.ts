/**
 * The Overview says when a list is cut: past the API's 100 requesters (or models) the rest arrive
 * as one entry that counts them, and the table shows its ten costliest with a line saying how many
 * there are in all. Screenshots to look at: overview-cut-lists-<size>.png.
 */
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { MAX_REQUESTERS_PER_DAY } from '../../lambda/usage/dynamodb/label-caps';
import { foldDistinctValues } from '../support/many-values';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { describeInBrowser, launchBrowser, newTab, screenshot, signIn, type ViewportName } from './browser-harness';

const REQUESTERS = 300;
const MODELS = 150;

describeInBrowser('lists cut on the Overview', () => {
  let proxy: ProxyServer;
  let browser: Browser;
  let tablePrefix: string;

  beforeAll(async () => {
    tablePrefix = `p${randomBytes(4).toString('hex')}-`;
    [proxy, browser] = await Promise.all([startProxy({ tablePrefix }), launchBrowser()]);
    // Every row also tagged: 25 keys (20 kept a day) of 12 values each.
    await foldDistinctValues(tablePrefix, proxy.account.accountId, {
      requesters: REQUESTERS,
      models: MODELS,
      tags: { keys: 25, values: 12 },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
  });

  test.each<ViewportName>(['laptop', 'phone'])(
    'Top requesters and Top models say how many are not listed (%s)',
    async (size) => {
      const { context, page } = await newTab(browser, size);
      try {
        await signIn(page, proxy.url, proxy.account.token);
        const requesters = page.getByTestId('top-requesters');
        // 100 by name and one entry for the other 200, the costliest: nine named rows and that one are shown.
        await expect(requesters.getByTestId('top-requesters-cut').textContent()).resolves.toBe(
          `10 of ${REQUESTERS} requesters shown: the other 91 are in the totals, not listed.`,
        );
        await expect(requesters.getByTestId('other-values').textContent()).resolves.toBe('200 other requesters');
        await expect(requesters.getByTestId('top-requester-row').count()).resolves.toBe(10);
        const models = page.getByTestId('top-models');
        await expect(models.getByTestId('top-models-cut').textContent()).resolves.toMatch(
          new RegExp(`^10 of ${MODELS} models shown: the other \\d+ are in the totals, not listed\\.$`),
        );
        await expect(models.getByTestId('other-values').textContent()).resolves.toBe('50 other models');
        await screenshot(page, `overview-cut-lists-${size}`);
      } finally {
        await context.close();
      }
    },
  );

  test('Spend by tag shows a key’s costliest values and one line for the rest', async () => {
    const { context, page } = await newTab(browser, 'laptop');
    try {
      await signIn(page, proxy.url, proxy.account.token);
      const tags = page.getByTestId('spend-by-tag');
      await expect(tags.getByTestId('spend-by-tag-key').locator('option').count()).resolves.toBe(20);
      // The API lists 10 of key-0's 12 values by name and sums the two cheapest into (other).
      await expect(tags.getByTestId('other-values').textContent()).resolves.toBe('2 other values');
      await expect(tags.getByTestId('spend-by-tag-cut').textContent()).resolves.toBe(
        '10 of 12 values shown: the other 1 is in the totals, not listed.',
      );
      await screenshot(page, 'overview-cut-lists-tags');
    } finally {
      await context.close();
    }
  });

  test('past the day’s cap the lists say their count is a lower bound', async () => {
    // The day's first 300 requesters are kept by name; the 20 after them are counted under (other) without names.
    const late = await proxy.createAccount('cut-lists-late');
    const { context, page } = await newTab(browser, 'laptop');
    try {
      await foldDistinctValues(tablePrefix, late.accountId, { requesters: MAX_REQUESTERS_PER_DAY + 20, models: 5 });
      await signIn(page, proxy.url, late.token);
      const requesters = page.getByTestId('top-requesters');
      await expect(requesters.getByTestId('top-requesters-cut').textContent()).resolves.toBe(
        `10 of more than ${MAX_REQUESTERS_PER_DAY} requesters shown: the others are in the totals, not listed.`,
      );
      await expect(requesters.getByTestId('other-values').textContent()).resolves.toBe(
        `${MAX_REQUESTERS_PER_DAY - 100}+ other requesters (past the daily cap)`,
      );
      await screenshot(page, 'overview-cut-lists-past-cap');
    } finally {
      await context.close();
    }
  });
});
