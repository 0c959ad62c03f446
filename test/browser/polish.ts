/**
 * The dashboard's finishing touches in headless Chromium against the real local server: the CSV
 * download, dark mode, auto-refresh and the snippet languages — at laptop and 375 px phone widths.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import type { LogRow } from '../../lambda/dashboard/src/types';
import { csvRows } from '../support/csv';
import type { ProxyServer } from '../support/proxy-server';
import {
  newTab,
  overflowsHorizontally,
  renderedFrames,
  screenshot,
  signIn,
  type ViewportName,
  signedInTab,
  loadRoute,
} from './browser-harness';
import { apiJson, ready, rgb, until, visit, type DepthWorld } from './depth-setup';

export const polishTests = (world: DepthWorld) =>
  describe('dashboard polish in a browser', () => {
    let proxy: ProxyServer;
    let browser: Browser;
    let token: string;
    let appRequestId: string;

    beforeAll(() => ({ proxy, browser, token, appRequestId } = world));

    test('the CSV reader the download checks rely on reads quotes, commas and line breaks', () => {
      expect(csvRows('a,b\r\n"x ""y"", z\nw",2\r\n')).toEqual([
        ['a', 'b'],
        ['x "y", z\nw', '2'],
      ]);
    });

    test('the CSV download holds exactly the rows of /api/logs for the same filters', async () => {
      const page = await signedInTab(world, token);
      await loadRoute(page, proxy.url, 'overview');
      for (const hash of ['#/logs', '#/logs?provider=prov-b', '#/logs?status=error']) {
        await visit(page, proxy, hash, 'logs');
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('logs-csv').click()]);
        expect(download.suggestedFilename()).toMatch(/^usage-logs-\d{4}-\d\d-\d\d\.csv$/);
        const [header, ...lines] = csvRows(readFileSync((await download.path())!, 'utf8'));
        const query = new URLSearchParams(hash.split('?')[1] ?? '');
        query.set('limit', '500');
        const items = (await apiJson<{ items: LogRow[] }>(proxy, token, `/api/logs?${query}`)).items;
        expect(items.length).toBeGreaterThan(0);
        const asRows = lines.map((line) => Object.fromEntries(header.map((name, i) => [name, line[i]])));
        expect(asRows.map((r) => r.id)).toEqual(items.map((r) => r.id));
        asRows.forEach((r, i) => {
          const row = items[i];
          expect([
            r.provider,
            r.kind,
            r.model,
            r.token_id,
            r.requester,
            r.error,
            Number(r.input_tokens),
            Number(r.output_tokens),
            Number(r.cost_usd),
            Number(r.status_code),
            r.cached,
          ]).toEqual([
            row.provider,
            row.kind,
            row.model,
            row.token_id,
            row.requester ?? '',
            row.error ?? '',
            row.input_tokens,
            row.output_tokens,
            row.cost_usd,
            row.status_code,
            String(row.cached),
          ]);
        });
      }
    });

    test('dark mode follows the system and the toggle, and its colours are applied', async () => {
      const page = await signedInTab(world, token);
      await page.emulateMedia({ colorScheme: 'dark' });
      await loadRoute(page, proxy.url, 'overview');
      await renderedFrames(page);
      const dark = {
        body: await rgb(page, 'html', 'backgroundColor'),
        card: await rgb(page, '.card', 'backgroundColor'),
        text: await rgb(page, 'h1', 'color'),
      };
      expect(dark).toEqual({ body: 'rgb(15, 19, 24)', card: 'rgb(23, 28, 35)', text: 'rgb(228, 232, 238)' });
      // "Follow the system": both schemes offered, so native controls and scrollbars follow it too.
      await expect(page.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).resolves.toBe(
        'light dark',
      );
      await screenshot(page, 'laptop-overview-dark');

      // The toggle: auto → light → dark, remembered across a reload.
      await expect(page.getByTestId('theme-toggle').getAttribute('data-theme-choice')).resolves.toBe('system');
      await page.getByTestId('theme-toggle').click();
      await expect(rgb(page, 'html', 'backgroundColor')).resolves.toBe('rgb(245, 246, 248)');
      await page.getByTestId('theme-toggle').click();
      await expect(rgb(page, 'html', 'backgroundColor')).resolves.toBe('rgb(15, 19, 24)');
      await expect(page.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).resolves.toBe('dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await expect(rgb(page, 'html', 'backgroundColor')).resolves.toBe('rgb(15, 19, 24)');
      await page.reload();
      await ready(page, 'overview');
      await expect(rgb(page, 'html', 'backgroundColor')).resolves.toBe('rgb(15, 19, 24)');
      // The charts (drawn on a canvas, which cannot follow CSS) are redrawn with the theme's axis colour.
      await expect(page.getByTestId('chart-cost').getAttribute('data-axis-color')).resolves.toBe('#a0aab8');
      await page.getByTestId('theme-toggle').click();
      await expect(page.getByTestId('theme-toggle').getAttribute('data-theme-choice')).resolves.toBe('system');
      await expect(rgb(page, 'html', 'backgroundColor')).resolves.toBe('rgb(245, 246, 248)');
      await expect(page.getByTestId('chart-cost').getAttribute('data-axis-color')).resolves.toBe('#5b6472');

      await visit(page, proxy, `#/logs/${appRequestId}`, 'logs');
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.locator('[data-testid=log-detail][data-state=ready]').waitFor();
      await expect(rgb(page, '.drawer', 'backgroundColor')).resolves.toBe('rgb(23, 28, 35)');
      await screenshot(page, 'laptop-log-detail-dark', { fullPage: false });
    });

    test('auto-refresh reloads the overview and the logs on a timer while switched on', async () => {
      const { context, page } = await newTab(browser);
      try {
        await page.clock.install();
        await signIn(page, proxy.url, token);
        const statsCalls: string[] = [];
        const logCalls: string[] = [];
        page.on('request', (r) => {
          if (r.url().includes('/api/stats')) statsCalls.push(r.url());
          if (r.url().includes('/api/logs?')) logCalls.push(r.url());
        });
        await page.clock.runFor(20_000);
        expect(statsCalls).toHaveLength(0);
        await page.getByTestId('overview-auto-refresh').check();
        await page.clock.runFor(16_000);
        expect(
          await until(
            () => statsCalls.length,
            (n) => n >= 1,
          ),
        ).toBeGreaterThanOrEqual(1);

        await visit(page, proxy, '#/logs', 'logs');
        await expect(page.getByTestId('logs-auto-refresh').isChecked()).resolves.toBe(true);
        const before = logCalls.length;
        await page.clock.runFor(16_000);
        expect(
          await until(
            () => logCalls.length,
            (n) => n > before,
          ),
        ).toBeGreaterThan(before);
        await page.getByTestId('logs-auto-refresh').uncheck();
        const after = logCalls.length;
        await page.clock.runFor(40_000);
        expect(logCalls.length).toBe(after);
      } finally {
        await context.close();
      }
    });

    test('snippets come in TypeScript, Python and curl', async () => {
      const page = await signedInTab(world, token);
      await visit(page, proxy, '#/integrations', 'integrations');
      await page.getByTestId('snippets-prov-a').click();
      const code = () => page.locator('[data-testid=snippet-stored-prov-a] pre').textContent();
      await expect(code()).resolves.toContain('import Anthropic from "@anthropic-ai/sdk"');
      await page.getByTestId('snippet-language-python-prov-a').click();
      await expect(code()).resolves.toContain('from anthropic import Anthropic');
      await page.getByTestId('snippet-language-curl-prov-a').click();
      await expect(code()).resolves.toContain(`curl ${proxy.url}/api/proxy/v1/messages`);
      await expect(page.locator('[data-testid=snippet-pass-through-prov-a] pre').textContent()).resolves.toContain(
        'x-proxy-token: sk-proxy-',
      );
    });

    // Each view is loaded once and shown in both schemes: switching the scheme live is what the dark
    // mode test above proves, and it saves loading every view twice.
    test.each(['laptop', 'phone'] as ViewportName[])(
      '%s, light and dark: no sideways scroll on any new view; screenshots',
      async (size) => {
        const page = await signedInTab(world, token, size);
        const problems: string[] = [];
        const inBothSchemes = async (shot: string, check: string, fullPage = true) => {
          for (const scheme of ['light', 'dark'] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            await renderedFrames(page);
            if (await overflowsHorizontally(page)) problems.push(`${shot} (${scheme}): ${check}`);
            await screenshot(page, `${size}-${scheme}-${shot}`, { fullPage });
          }
        };
        const views: [string, string, string][] = [
          ['#/overview?period=today', 'overview', 'overview-today'],
          ['#/overview?period=30d', 'overview', 'overview-30d'],
          ['#/logs?model=gpt', 'logs', 'logs-filtered'],
          [`#/logs/${appRequestId}`, 'logs', 'log-detail'],
          ['#/tokens?period=30d', 'tokens', 'tokens-spend'],
        ];
        for (const [hash, name, shot] of views) {
          await visit(page, proxy, hash, name);
          if (hash.includes('/logs/')) await page.locator('[data-testid=log-detail][data-state=ready]').waitFor();
          await inBothSchemes(shot, `wider than the ${size} screen`, !hash.includes('/logs/'));
        }
        if (size === 'phone') {
          await visit(page, proxy, '#/logs', 'logs');
          await page.getByTestId('logs-filters-toggle').click();
          await inBothSchemes('logs-filters-open', 'logs filters wider than the phone screen');
          await visit(page, proxy, '#/integrations', 'integrations');
          await page.getByTestId('snippets-prov-b').click();
          await page.getByTestId('snippet-language-curl-prov-b').click();
          await inBothSchemes('integrations-curl', 'curl snippet wider than the phone screen');
        }
        problems.push(...(await page.evaluate(() => window.__pageErrors)).map((e) => `script error: ${e}`));
        expect(problems).toEqual([]);
      },
    );
  });
