/**
 * The Overview says when a list is cut: past the API's 100 requesters (or models) the rest arrive
 * as one entry that counts them, and the table shows its ten costliest with a line saying how many
 * there are in all; past the day's cap the count is a lower bound. Screenshots to look at:
 * overview-cut-lists-<size>.png.
 */
import { DAILY_CAPS } from '../../lambda/usage/dynamodb/daily-caps';
import { foldDistinctValues } from '../support/many-values';
import type { Account } from '../support/proxy-server';
import { screenshot, type BrowserWorld, type ViewportName, openSignedIn } from './browser-harness';

/** Past the API's 100, under the day's caps: each distinct value is one row, so the table's figures are known. */
const REQUESTERS = 120;
const MODELS = 120;

/** `tablePrefix`: the one the journey's server was started with (the values are folded straight into its tables). */
export const cutListsTests = (world: BrowserWorld, tablePrefix: string) =>
  describe('lists cut on the Overview', () => {
    let cut: Account;
    let pastCap: Account;

    beforeAll(async () => {
      [cut, pastCap] = await Promise.all([
        world.proxy.createAccount('cut-lists'),
        world.proxy.createAccount('cut-lists-late'),
      ]);
      await Promise.all([
        foldDistinctValues(tablePrefix, cut.accountId, { requesters: REQUESTERS, models: MODELS }),
        // The day's first 300 requesters are kept by name; the 20 after them are counted under (other)
        // without names. Every row also tagged: 25 keys (20 kept a day) of 12 values each.
        foldDistinctValues(tablePrefix, pastCap.accountId, {
          requesters: DAILY_CAPS.requesters + 20,
          models: 5,
          tags: { keys: 25, values: 12 },
        }),
      ]);
    });

    test.each<ViewportName>(['laptop', 'phone'])(
      'Top requesters and Top models say how many are not listed (%s)',
      async (size) => {
        const page = await openSignedIn(world, cut.token, 'overview', { size });
        const requesters = page.getByTestId('top-requesters');
        // 100 by name and one entry for the other 20, the costliest: nine named rows and that one are
        // shown, so 91 of the named are not.
        await expect(requesters.getByTestId('top-requesters-cut').textContent()).resolves.toBe(
          `10 of ${REQUESTERS} requesters shown: the other 91 are in the totals, not listed.`,
        );
        await expect(requesters.getByTestId('other-values').textContent()).resolves.toBe(
          `${REQUESTERS - 100} other requesters`,
        );
        await expect(requesters.getByTestId('top-requester-row').count()).resolves.toBe(10);
        const models = page.getByTestId('top-models');
        await expect(models.getByTestId('top-models-cut').textContent()).resolves.toBe(
          `10 of ${MODELS} models shown: the other 91 are in the totals, not listed.`,
        );
        await expect(models.getByTestId('other-values').textContent()).resolves.toBe(`${MODELS - 100} other models`);
        await screenshot(page, `overview-cut-lists-${size}`);
      },
    );

    test('Spend by tag shows a key’s costliest values and one line for the rest', async () => {
      const page = await openSignedIn(world, pastCap.token, 'overview');
      const tags = page.getByTestId('spend-by-tag');
      await expect(tags.getByTestId('spend-by-tag-key').locator('option').count()).resolves.toBe(20);
      // The API lists 10 of key-0's 12 values by name and sums the two cheapest into (other).
      await expect(tags.getByTestId('other-values').textContent()).resolves.toBe('2 other values');
      await expect(tags.getByTestId('spend-by-tag-cut').textContent()).resolves.toBe(
        '10 of 12 values shown: the other 1 is in the totals, not listed.',
      );
      await screenshot(page, 'overview-cut-lists-tags');
    });

    test('past the day’s cap the lists say their count is a lower bound', async () => {
      const page = await openSignedIn(world, pastCap.token, 'overview');
      const requesters = page.getByTestId('top-requesters');
      await expect(requesters.getByTestId('top-requesters-cut').textContent()).resolves.toBe(
        `10 of more than ${DAILY_CAPS.requesters} requesters shown: the others are in the totals, not listed.`,
      );
      await expect(requesters.getByTestId('other-values').textContent()).resolves.toBe(
        `${DAILY_CAPS.requesters - 100}+ other requesters (past the daily cap)`,
      );
      await screenshot(page, 'overview-cut-lists-past-cap');
    });
  });
