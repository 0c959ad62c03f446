/**
 * Tags in the browser (docs/tags.md), at laptop and phone widths: the Logs tag filter kept in the
 * URL, tags in a request's details, Spend by tag on the Overview equal to the rows. A token's tags,
 * limits and tag budgets on the Tokens page: dashboard-token-controls.test.ts.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { formatUsd } from '../../lambda/dashboard/src/format';
import { callProxy } from '../reliability/support/requests';
import { csvRows } from '../support/csv';
import { eventually } from '../support/patience';
import type { Account, ProxyServer } from '../support/proxy-server';
import {
  overflowsHorizontally,
  screenshot,
  VIEWPORTS,
  type ViewportName,
  type BrowserWorld,
  openSignedIn,
} from './browser-harness';

interface Row {
  id: string;
  tags?: Record<string, string>;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  saved_nanos?: number;
}

async function rows(proxy: ProxyServer, account: Account, query = ''): Promise<Row[]> {
  const response = await proxy.api(`/api/logs?limit=500${query ? `&${query}` : ''}`, { token: account.token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Row[] }).items;
}

const SIZES = Object.keys(VIEWPORTS) as ViewportName[];

export const tagsTests = (world: BrowserWorld) =>
  describe('tags in the dashboard', () => {
    /** An account with tagged traffic: two team=search requests (one a cache hit, so with savings), one team=ads, one untagged. */
    async function taggedAccount(name: string): Promise<Account> {
      const account = await world.proxy.createAccount(name);
      await world.proxy.saveKey(account.token, 'prov-b');
      const send = async (tags: string | undefined, extra: Record<string, string> = {}, prompt?: string) => {
        const answer = await callProxy(world.proxy, {
          provider: 'prov-b',
          token: account.token,
          prompt,
          headers: { ...(tags ? { 'x-proxy-tags': tags } : {}), ...extra },
        });
        expect(answer.status).toBe(200);
        return answer;
      };
      await send('team=search, feature=autocomplete', { 'x-proxy-cache': 'true' }, 'cached question');
      expect(
        (await send('team=search, feature=autocomplete', { 'x-proxy-cache': 'true' }, 'cached question')).headers.get(
          'x-proxy-cache',
        ),
      ).toBe('HIT');
      await send('team=search, feature=summary');
      await send('team=ads');
      await send(undefined);
      await world.proxy.waitForRows(account.token, 5);
      // Spend by tag comes from the rollups, folded from the rows just after them.
      let byTag: Record<string, Record<string, { requests: number }>> = {};
      const folded = await eventually(async () => {
        byTag = (
          (await (await world.proxy.api('/api/stats', { token: account.token })).json()) as { by_tag: typeof byTag }
        ).by_tag;
        return byTag.team?.search?.requests === 3 && byTag.team.ads?.requests === 1 ? true : undefined;
      });
      if (!folded) throw new Error(`by_tag never reached the rows: ${JSON.stringify(byTag)}`);
      return account;
    }

    const shownIds = (page: Page) =>
      page.locator('[data-testid=log-row]').evaluateAll((els) => els.map((el) => el.getAttribute('data-id')).sort());
    const logsReady = (page: Page) => page.locator('[data-testid=page-logs][data-state=ready]').waitFor();

    /** Waits until the list shows exactly these rows (a page that was ready before a navigation may not have started loading yet). */
    async function waitForShown(page: Page, expected: Row[]): Promise<void> {
      const ids = expected.map((r) => r.id).sort();
      await page
        .waitForFunction(
          (want) => {
            if (!document.querySelector('[data-testid=page-logs][data-state=ready]')) return false;
            const shown = [...document.querySelectorAll('[data-testid=log-row]')]
              .map((el) => el.getAttribute('data-id'))
              .sort();
            return JSON.stringify(shown) === JSON.stringify(want);
          },
          ids,
          // Every 100 ms, not every frame: a callback per frame keeps the renderer making frames while nothing changes.
          { timeout: 15_000, polling: 100 },
        )
        .catch(async () => {
          // Say what is on screen instead of only "timeout".
          expect(await shownIds(page)).toEqual(ids);
        });
    }

    async function openFilters(page: Page, size: ViewportName): Promise<void> {
      // On a phone the filters fold behind a toggle.
      if (size === 'phone' && (await page.getByTestId('logs-filters-toggle').getAttribute('aria-expanded')) !== 'true')
        await page.getByTestId('logs-filters-toggle').click();
    }

    async function addTagFilter(page: Page, size: ViewportName, tag: string): Promise<void> {
      await openFilters(page, size);
      await page.getByTestId('logs-filter-tag').fill(tag);
      await page.getByTestId('logs-filter-tag').press('Enter');
      await page.locator(`[data-testid=logs-filter-tag-chip][data-tag="${tag}"]`).waitFor();
      await page.getByTestId('logs-apply').click();
      await logsReady(page);
    }

    test.each(SIZES)(
      'the Logs tag filter narrows the rows, stays in the URL through reload and back, and a request shows its tags (%s)',
      async (size) => {
        const account = await taggedAccount(`tags-logs-${size}`);
        const all = await rows(world.proxy, account);
        const search = await rows(world.proxy, account, 'tag=team%3Dsearch');
        const searchAutocomplete = await rows(world.proxy, account, 'tag=team%3Dsearch&tag=feature%3Dautocomplete');
        expect([all.length, search.length, searchAutocomplete.length]).toEqual([5, 3, 2]);

        const page = await openSignedIn(world, account.token, 'logs', { size });
        await waitForShown(page, all);

        await addTagFilter(page, size, 'team=search');
        await waitForShown(page, search);
        expect(new URL(page.url()).hash).toBe('#/logs?tag=team%3Dsearch');

        // A second tag: a row must carry both.
        await addTagFilter(page, size, 'feature=autocomplete');
        await waitForShown(page, searchAutocomplete);
        expect(new URL(page.url()).hash).toBe('#/logs?tag=team%3Dsearch&tag=feature%3Dautocomplete');
        if (size === 'phone')
          await expect(page.getByTestId('logs-filters-toggle').textContent()).resolves.toContain('2 active');
        await screenshot(page, `tags-logs-filtered-${size}`);
        expect(await overflowsHorizontally(page)).toBe(false);

        // Download CSV exports the same rows, with their tags.
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('logs-csv').click()]);
        const [header, ...lines] = csvRows(readFileSync((await download.path())!, 'utf8'));
        const exported = lines.map((line) => Object.fromEntries(header!.map((name, i) => [name, line[i]])));
        expect(exported.map((r) => r.id).sort()).toEqual(searchAutocomplete.map((r) => r.id).sort());
        expect(new Set(exported.map((r) => r.tags))).toEqual(new Set(['feature=autocomplete,team=search']));

        await page.reload();
        await logsReady(page);
        await waitForShown(page, searchAutocomplete);
        await openFilters(page, size);
        await expect(
          page
            .locator('[data-testid=logs-filter-tag-chip]')
            .evaluateAll((els) => els.map((el) => el.getAttribute('data-tag'))),
        ).resolves.toEqual(['team=search', 'feature=autocomplete']);
        await screenshot(page, `tags-logs-filters-open-${size}`);
        expect(await overflowsHorizontally(page)).toBe(false);

        await page.goBack();
        await logsReady(page);
        await waitForShown(page, search);

        // The detail panel lists the row's tags.
        const tagged = searchAutocomplete[0]!;
        await page.locator(`[data-testid=log-row][data-id="${tagged.id}"]`).click();
        await page.locator('[data-testid=log-detail][data-state=ready]').waitFor();
        await expect(
          page
            .locator('[data-testid=log-detail-tag]')
            .evaluateAll((els) => els.map((el) => el.getAttribute('data-tag'))),
        ).resolves.toEqual(['feature=autocomplete', 'team=search']);
        await screenshot(page, `tags-log-detail-${size}`, { fullPage: false });
        expect(await overflowsHorizontally(page)).toBe(false);
        // A tag in the details opens the logs that carry it.
        await page.locator('[data-testid=log-detail-tag][data-tag="feature=autocomplete"] a').click();
        await page.locator('[data-testid=log-detail]').waitFor({ state: 'detached' });
        await logsReady(page);
        await waitForShown(page, searchAutocomplete);

        // A malformed tag is refused by the API, whose message is shown.
        await openFilters(page, size);
        await page.getByTestId('logs-clear').click();
        await logsReady(page);
        await openFilters(page, size);
        await page.getByTestId('logs-filter-tag').fill('Team=search');
        await page.getByTestId('logs-apply').click();
        await page.locator('[data-testid=page-logs][data-state=error]').waitFor();
        await expect(page.getByTestId('logs-error').textContent()).resolves.toContain(
          'tag key "Team" must be 1 to 40 lowercase letters',
        );
        // A field without key=value is caught before it is sent.
        await openFilters(page, size);
        await page.getByTestId('logs-filter-tag').fill('team');
        await page.getByTestId('logs-filter-tag-add').click();
        await expect(page.getByTestId('logs-filter-tag-error').textContent()).resolves.toBe(
          'Write a tag as key=value, for example team=search.',
        );
      },
    );

    test.each(SIZES)('Spend by tag on the Overview equals the rows, per value of the chosen key (%s)', async (size) => {
      const account = await taggedAccount(`tags-overview-${size}`);
      const page = await openSignedIn(world, account.token, 'overview', { size });
      const card = page.getByTestId('spend-by-tag');
      await card.getByTestId('spend-by-tag-row').first().waitFor();
      // Keys in alphabetical order: "feature" first.
      await expect(card.getByTestId('spend-by-tag-key').inputValue()).resolves.toBe('feature');
      await card.getByTestId('spend-by-tag-key').selectOption('team');
      await card.locator('[data-testid=spend-by-tag-row][data-value=ads]').waitFor();

      for (const value of ['search', 'ads']) {
        const expected = await rows(world.proxy, account, `tag=team%3D${value}`);
        const row = card.locator(`[data-testid=spend-by-tag-row][data-value="${value}"]`);
        const figures = await row.evaluate((el) => ({
          requests: Number(el.getAttribute('data-requests')),
          input: Number(el.getAttribute('data-input-tokens')),
          output: Number(el.getAttribute('data-output-tokens')),
          cost: Number(el.getAttribute('data-cost-nanos')),
          saved: Number(el.getAttribute('data-saved-nanos')),
        }));
        const sum = (pick: (r: Row) => number) => expected.reduce((total, r) => total + pick(r), 0);
        expect(figures).toEqual({
          requests: expected.length,
          input: sum((r) => r.input_tokens),
          output: sum((r) => r.output_tokens),
          cost: sum((r) => r.cost_nanos),
          saved: sum((r) => r.saved_nanos ?? 0),
        });
        // What is on screen: null for a hidden cell.
        const cells = await row
          .locator('td')
          .evaluateAll((tds) =>
            tds.map((td) => (td.checkVisibility() ? (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim() : null)),
          );
        expect(cells[0]).toBe(value);
        // On a phone the tokens go under the requests, in place of their own column.
        if (size === 'laptop')
          expect(cells.slice(1, 3)).toEqual([String(expected.length), `${figures.input} / ${figures.output}`]);
        else
          expect(cells.slice(1, 3)).toEqual([`${expected.length} ${figures.input} in / ${figures.output} out`, null]);
        expect(cells[3]!.startsWith(formatUsd(figures.cost / 1e9))).toBe(true);
      }
      // The cache hit of team=search saved money; ads saved none.
      await expect(
        card.locator('[data-testid=spend-by-tag-row][data-value=search]').getAttribute('data-saved-nanos'),
      ).resolves.not.toBe('0');
      await expect(
        card
          .locator('[data-testid=spend-by-tag-row][data-value=search]')
          .getByTestId('spend-by-tag-saved')
          .textContent(),
      ).resolves.toMatch(/^saved \$0\.0000\d+$/);
      await expect(
        card.locator('[data-testid=spend-by-tag-row][data-value=ads]').getByTestId('spend-by-tag-saved').count(),
      ).resolves.toBe(0);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `tags-overview-${size}`);
      await screenshot(card, `tags-overview-card-${size}`);
      expect(await overflowsHorizontally(page)).toBe(false);

      // A value links to its logs.
      await card.locator('[data-testid=spend-by-tag-row][data-value=ads] a').click();
      await logsReady(page);
      await waitForShown(page, await rows(world.proxy, account, 'tag=team%3Dads'));
    });
  });
