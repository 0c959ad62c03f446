/**
 * The dashboard in headless Chromium against the real local server (DynamoDB Local, fake upstreams):
 * sign in, the overview against /api/stats, the logs with filters, the Cached badge and provider
 * errors, paging through with Load more and a refresh on top of it.
 */
import type { Browser, Page } from 'playwright-core';
import { formatInt, formatPercent, formatUsd } from '../../lambda/dashboard/src/format';
import type { LogRow, Stats } from '../../lambda/dashboard/src/types';
import { EVENTUALLY_MS } from '../support/patience';
import type { ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';
import { newTab, openSignedIn, signedInTab, loadRoute } from './browser-harness';
import type { DepthWorld } from './depth-setup';
import type { SentTraffic } from './traffic';

async function apiJson<T>(proxy: ProxyServer, token: string, path: string): Promise<T> {
  const response = await proxy.api(path, { token });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/**
 * Applies the filter form and waits for the page to show the answer to the new query: the response
 * awaited is the one whose URL carries `expected`, not an earlier, slower one still in flight.
 */
async function applyFilters(page: Page, expected: string): Promise<void> {
  await Promise.all([
    page.waitForResponse((r) => r.url().includes('/api/logs') && r.url().includes(expected)),
    page.getByTestId('logs-apply').click(),
  ]);
  await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
}

async function rowIds(page: Page): Promise<string[]> {
  return page.getByTestId('log-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id') ?? ''));
}

export const overviewAndLogsTests = (world: DepthWorld) =>
  describe('sign-in, the overview and the logs', () => {
    let proxy: ProxyServer;
    let browser: Browser;
    let token: string;
    let traffic: SentTraffic;

    beforeAll(() => ({ proxy, browser, token, traffic } = world));

    test('sign in tells a wrong token and a proxy-only token apart, and keeps the token out of the URL', async () => {
      const created = (await (await proxy.api('/api/tokens', { token, body: { name: 'proxy-only' } })).json()) as {
        token: string;
      };
      proxy.secrets.add(created.token);
      const { context, page } = await newTab(browser);
      try {
        await page.goto(`${proxy.url}/`);
        await page.getByTestId('signin-token').fill('sk-proxy-not-a-real-token');
        await page.getByTestId('signin-submit').click();
        await expect(page.getByTestId('signin-error').textContent()).resolves.toMatch(/wrong or has been revoked/);

        await page.getByTestId('signin-token').fill(created.token);
        await page.getByTestId('signin-submit').click();
        await page.getByText(/cannot open the dashboard/).waitFor();
        await expect(page.getByTestId('signin-error').textContent()).resolves.toMatch(/manage scope/);

        await page.getByTestId('signin-token').fill(token);
        await page.getByTestId('signin-submit').click();
        await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
        expect(page.url()).not.toContain(token);
        await expect(page.evaluate(() => Object.values(sessionStorage))).resolves.toContain(token);
        await expect(page.evaluate(() => Object.values(localStorage))).resolves.not.toContain(token);

        // A reload keeps the session (same tab); signing out forgets it.
        await page.reload();
        await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
        await page.getByTestId('signout').click();
        await page.getByTestId('signin-form').waitFor();
        await expect(page.evaluate(() => Object.values(sessionStorage))).resolves.not.toContain(token);
      } finally {
        await context.close();
      }
    });

    test('the overview shows the numbers of /api/stats, with a Savings card', async () => {
      const page = await signedInTab(world, token);
      const statsAnswer = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await loadRoute(page, proxy.url, 'overview');
      const shown = (await (await statsAnswer).json()) as Stats;
      const url = new URL((await statsAnswer).url());
      const stats = await apiJson<Stats>(proxy, token, url.pathname + url.search);
      expect(shown.totals).toEqual(stats.totals);

      const t = stats.totals;
      // The traffic and the support-bot's request.
      expect(t).toMatchObject({ requests: traffic.rows + 1, errors: 1, cache_hits: 1 });
      expect(t.savings_usd).toBeGreaterThan(0);
      const expected: Array<[string, string, number]> = [
        ['card-requests', formatInt(t.requests), t.requests],
        ['card-cost', formatUsd(t.cost_usd), t.cost_usd],
        ['card-savings', formatUsd(t.savings_usd), t.savings_usd],
        ['card-tokens-in', formatInt(t.input_tokens), t.input_tokens],
        ['card-tokens-out', formatInt(t.output_tokens), t.output_tokens],
        ['card-cache-hit-rate', formatPercent(t.cache_hits, t.requests), t.cache_hits],
        ['card-errors', formatInt(t.errors), t.errors],
      ];
      for (const [testId, text, raw] of expected) {
        const value = page.getByTestId(`${testId}-value`);
        await expect(value.textContent()).resolves.toBe(text);
        await expect(value.getAttribute('data-value')).resolves.toBe(String(raw));
      }
      await expect(page.locator('[data-testid=card-savings] h3').textContent()).resolves.toBe('Savings');

      const models = await page
        .getByTestId('top-model-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-model')));
      expect(models).toEqual(stats.by_model.slice(0, 10).map((m) => m.model));
      const requesters = await page
        .getByTestId('top-requester-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-requester')));
      expect(requesters.sort()).toEqual(stats.by_requester.map((r) => r.requester).sort());
      await expect(page.getByTestId('top-requesters').textContent()).resolves.toContain('(none)');
      for (const chart of ['chart-cost', 'chart-requests']) {
        await expect(page.locator(`[data-testid=${chart}] canvas`).count()).resolves.toBeGreaterThan(0);
        await expect(page.getByTestId(chart).textContent()).resolves.toContain('Anthropic');
      }

      // Another period asks for another range and shows that answer.
      const thirtyDays = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await page.getByTestId('period-30d').click();
      const wide = new URL((await thirtyDays).url());
      const days = (Date.parse(wide.searchParams.get('to')!) - Date.parse(wide.searchParams.get('from')!)) / 86_400_000;
      expect(days).toBeGreaterThan(29);
      expect(days).toBeLessThanOrEqual(30);
      await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
      await expect(page.getByTestId('card-requests-value').textContent()).resolves.toBe(formatInt(t.requests));
    });

    test('logs: newest first, filters, the Cached badge with its saving, and the provider error', async () => {
      const page = await openSignedIn(world, token, 'logs');
      const all = await apiJson<{ items: LogRow[] }>(proxy, token, '/api/logs?limit=50');
      await expect(rowIds(page)).resolves.toEqual(all.items.map((r) => r.id));

      await page.getByTestId('logs-filter-provider').selectOption('prov-b');
      await applyFilters(page, 'provider=prov-b');
      expect(page.url()).toContain('provider=prov-b');
      const provB = await page
        .getByTestId('log-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-provider')));
      expect(provB).toEqual(['prov-b', 'prov-b']);

      await page.getByTestId('logs-filter-provider').selectOption('');
      await page.getByTestId('logs-filter-requester').fill('bob');
      await page.getByTestId('logs-filter-status').selectOption('error');
      await applyFilters(page, 'status=error');
      const errorRow = page.getByTestId('log-row');
      await expect(errorRow.count()).resolves.toBe(1);
      await expect(errorRow.getAttribute('data-status')).resolves.toBe('429');
      await expect(errorRow.getByTestId('log-error').textContent()).resolves.toContain(traffic.errorMessage);

      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs')),
        page.getByTestId('logs-clear').click(),
      ]);
      await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
      await page.getByTestId('logs-filter-cached').selectOption('true');
      await applyFilters(page, 'cached=true');
      const hit = all.items.find((r) => r.id === traffic.cacheHitId)!;
      expect(hit).toMatchObject({ cached: true, cost_usd: 0, input_tokens: 0, output_tokens: 0 });
      await expect(rowIds(page)).resolves.toEqual([traffic.cacheHitId]);
      const cachedRow = page.getByTestId('log-row');
      await expect(cachedRow.getByTestId('badge-cached').textContent()).resolves.toBe('Cached');
      await expect(cachedRow.getByTestId('log-saved').textContent()).resolves.toBe(`saved ${formatUsd(hit.saved_usd)}`);

      // Nothing cached among the errors: the empty state says so.
      await page.getByTestId('logs-filter-status').selectOption('error');
      await applyFilters(page, 'status=error');
      await expect(page.getByTestId('logs-empty').textContent()).resolves.toContain('No requests match these filters');

      // A new request appears at the top after a refresh.
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs')),
        page.getByTestId('logs-clear').click(),
      ]);
      await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
      const fresh = await callThroughSdk({ proxyBase: proxy.proxyBase, token, provider: 'prov-c', stream: true });
      await proxy.waitForRows(token, traffic.rows + 2);
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs')),
        page.getByTestId('logs-refresh').click(),
      ]);
      await page.locator(`[data-testid=log-row][data-id="${fresh.requestId}"]`).waitFor({ timeout: EVENTUALLY_MS });
      await expect(rowIds(page).then((ids) => ids[0])).resolves.toBe(fresh.requestId);
    });

    // Also the refresh after "Load more" (folded in from the polish topic: both sent a page's worth of rows).
    test('logs page through with Load more, an account sees only its own rows, and a refresh keeps the loaded rows and puts new ones on top', async () => {
      const other = await proxy.createAccount('many-rows');
      await proxy.saveKey(other.token, 'prov-b');
      const count = 53;
      const ask = (i: number) =>
        callThroughSdk({
          proxyBase: proxy.proxyBase,
          token: other.token,
          provider: 'prov-b',
          stream: false,
          messages: [{ role: 'user', content: `Question ${i}` }],
        });
      for (let first = 0; first < count; first += 10) {
        await Promise.all(Array.from({ length: Math.min(10, count - first) }, (_, i) => ask(first + i)));
      }
      await proxy.waitForRows(other.token, count);
      const page = await openSignedIn(world, other.token, 'logs');
      await expect(page.getByTestId('log-row').count()).resolves.toBe(50);
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('cursor=')),
        page.getByTestId('logs-load-more').click(),
      ]);
      await page.getByTestId('logs-end').waitFor();
      const ids = await rowIds(page);
      expect(ids).toHaveLength(count);
      expect(new Set(ids).size).toBe(count);
      expect(ids).not.toContain(traffic.cacheHitId);

      const latest = await ask(count);
      await proxy.rowsFor(other.token, [latest.requestId]);
      await page.getByTestId('logs-refresh').click();
      await page.locator(`[data-testid=log-row][data-id="${latest.requestId}"]`).waitFor();
      await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
      const refreshed = await rowIds(page);
      expect(refreshed).toHaveLength(count + 1);
      expect(refreshed[0]).toBe(latest.requestId);
      expect(new Set(refreshed).size).toBe(refreshed.length);
    });
  });
