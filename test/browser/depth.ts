/**
 * The dashboard's deeper views in headless Chromium against the real local server: a request's
 * details (and their deep link), hourly charts for short periods, a chart per metric, per-token
 * spend and the model-prefix filter with suggestions. The CSV download, dark mode, auto-refresh and
 * snippets are in polish.ts.
 */
import { formatCost, formatInt, formatMs, formatUsd } from '../../lambda/dashboard/src/format';
import type { LogRow, Stats } from '../../lambda/dashboard/src/types';
import type { ProxyServer } from '../support/proxy-server';
import { screenshot, signedInTab, loadRoute } from './browser-harness';
import { apiJson, ready, until, visit, type DepthWorld } from './depth-setup';
import type { SentTraffic } from './traffic';

export const depthTests = (world: DepthWorld) =>
  describe('dashboard depth in a browser', () => {
    let proxy: ProxyServer;
    let token: string;
    let traffic: SentTraffic;
    let appToken: { token: string; token_id: string };
    let appRequestId: string;

    beforeAll(() => ({ proxy, token, traffic, appToken, appRequestId } = world));

    test('a click or Enter on a log row opens every field of the row, deep-linkable, with a copy button for the id', async () => {
      const page = await signedInTab(world, token);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await visit(page, proxy, '#/logs', 'logs');
      const all = await apiJson<{ items: LogRow[] }>(proxy, token, '/api/logs?limit=50');
      const failed = all.items.find((r) => r.status_code >= 400)!;

      await page.locator(`[data-testid=log-row][data-id="${failed.id}"]`).click();
      const panel = page.locator('[data-testid=log-detail][data-state=ready]');
      await panel.waitFor();
      expect(page.url()).toContain(`#/logs/${failed.id}`);
      await expect(page.getByTestId('log-detail-id').textContent()).resolves.toBe(failed.id);
      await expect(page.getByTestId('log-detail-error-text').textContent()).resolves.toContain(traffic.errorMessage);
      const fields = await panel
        .locator('.detail-field')
        .evaluateAll((els) =>
          Object.fromEntries(els.map((el) => [el.getAttribute('data-field'), el.querySelector('dd')!.textContent])),
        );
      // Every field of the row is shown (cost_nanos and saved_nanos inside the cost lines, error above).
      const covered = new Set([...Object.keys(fields), 'id', 'error', 'cost_nanos', 'saved_nanos', 'price_source']);
      expect(Object.keys(failed).filter((key) => !covered.has(key))).toEqual([]);
      expect(fields).toMatchObject({
        provider: 'Groq',
        model: failed.model,
        mode: 'stored key',
        token_id: expect.stringContaining(failed.token_id),
        requester: failed.requester,
        input_tokens: formatInt(failed.input_tokens),
        cache_read_tokens: '0',
        latency_ms: formatMs(failed.latency_ms),
        status_code: String(failed.status_code),
        stream: 'no',
        cached: 'no',
      });
      const answered = all.items.find((r) => r.priced && r.price_source)!;
      await page.goto(`${proxy.url}/#/logs/${answered.id}`);
      await page.locator(`[data-testid=log-detail][data-id="${answered.id}"][data-state=ready]`).waitFor();
      await expect(page.locator('[data-field=priced] dd').textContent()).resolves.toBe(answered.price_source);
      await page.goto(`${proxy.url}/#/logs/${failed.id}`);
      await page.locator(`[data-testid=log-detail][data-id="${failed.id}"][data-state=ready]`).waitFor();
      await screenshot(page, 'laptop-log-detail-error', { fullPage: false });

      // A modal keeps the keyboard inside: Tab and Shift+Tab wrap around the panel's controls.
      for (const key of [
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Shift+Tab',
        'Shift+Tab',
        'Shift+Tab',
        'Shift+Tab',
        'Shift+Tab',
        'Shift+Tab',
      ]) {
        await page.keyboard.press(key);
        await expect(
          page.evaluate(() => Boolean(document.activeElement?.closest('[data-testid=log-detail]'))),
        ).resolves.toBe(true);
      }
      await page.getByTestId('log-detail-copy').click();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(failed.id);

      // Esc closes, back to the list with the row focused; Enter on a focused row opens it again.
      await page.keyboard.press('Escape');
      await page.getByTestId('log-detail').waitFor({ state: 'detached' });
      expect(page.url()).toMatch(/#\/logs$/);
      const streamed = all.items.find((r) => r.stream && r.provider === 'prov-a')!;
      await page.locator(`[data-testid=log-row][data-id="${streamed.id}"]`).focus();
      await page.keyboard.press('Enter');
      await page.locator(`[data-testid=log-detail][data-id="${streamed.id}"][data-state=ready]`).waitFor();
      await expect(page.locator('[data-field=stream] dd').textContent()).resolves.toBe('yes');
      await page.getByTestId('log-detail-close').click();

      // The deep link alone, loaded from scratch (same tab, so the same session), fetches the row by id.
      const fresh = page;
      await fresh.goto('about:blank');
      const rowAnswer = fresh.waitForResponse((r) => r.url().endsWith(`/api/logs/${appRequestId}`));
      await fresh.goto(`${proxy.url}/#/logs/${appRequestId}?status=error`);
      expect((await rowAnswer).status()).toBe(200);
      await fresh.locator(`[data-testid=log-detail][data-id="${appRequestId}"][data-state=ready]`).waitFor();
      // The token's name comes with the token list, which may answer after the row.
      await fresh.locator('[data-field=token_id] dd', { hasText: 'support-bot' }).waitFor();
      await expect(fresh.locator('[data-field=requester] dd').textContent()).resolves.toBe('dana');
      // An id this account does not have says so.
      await fresh.goto(`${proxy.url}/#/logs/0000000000-0000000000000000`);
      await expect(fresh.getByTestId('log-detail-error').textContent()).resolves.toContain('No request');
    });

    test('Today is charted per hour: cost, requests, tokens in/out and latency, with whole-number ticks for counts', async () => {
      const page = await signedInTab(world, token);
      const answer = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await loadRoute(page, proxy.url, 'overview');
      await answer;
      const todayAnswer = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await page.getByTestId('period-today').click();
      const stats = (await (await todayAnswer).json()) as Stats;
      await ready(page, 'overview');
      expect(stats.by_hour.length).toBeGreaterThan(0);
      expect(stats.by_hour.length).toBeLessThanOrEqual(24);
      expect(stats.by_hour.reduce((sum, h) => sum + h.requests, 0)).toBe(stats.totals.requests);
      await expect(page.getByTestId('charts').getAttribute('data-unit')).resolves.toBe('hour');

      for (const [chart, title] of [
        ['chart-cost', 'Cost per hour'],
        ['chart-requests', 'Requests per hour'],
        ['chart-tokens', 'Tokens in / out per hour'],
        ['chart-latency', 'Latency per hour'],
      ]) {
        const figure = page.getByTestId(chart);
        await expect(figure.locator('figcaption').textContent()).resolves.toBe(title);
        await expect(figure.getAttribute('data-buckets')).resolves.toBe(String(stats.by_hour.length));
        // Drawn: a canvas with coloured pixels on it, not a blank one.
        const painted = await figure.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
          const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          let count = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i] > 0) count++;
          return count;
        });
        expect([chart, painted > 200]).toEqual([chart, true]);
      }
      const legend = (id: string) => page.getByTestId(id).locator('.chart-legend').textContent();
      await expect(legend('chart-requests')).resolves.toContain('Anthropic');
      await expect(legend('chart-tokens')).resolves.toContain(`Input ${formatInt(stats.totals.input_tokens)}`);
      await expect(legend('chart-tokens')).resolves.toContain(`Output ${formatInt(stats.totals.output_tokens)}`);
      await expect(legend('chart-latency')).resolves.toContain(`p95 ${formatMs(stats.totals.latency_p95_ms)}`);
      await expect(legend('chart-cost')).resolves.toContain('OpenAI');

      // A handful of requests must not give the axis ticks like 2, 2, 1, 1, 0.
      const ticks = await page.getByTestId('chart-requests').evaluate((figure) => {
        const axes = figure.querySelectorAll('.u-axis');
        return [...axes[1].querySelectorAll('.u-value, div')].map((el) => el.textContent ?? '').filter((t) => t !== '');
      });
      if (ticks.length) {
        expect(new Set(ticks).size).toBe(ticks.length);
        for (const tick of ticks) expect(tick).toMatch(/^\d[\d,]*$/);
      }
      await screenshot(page, 'laptop-overview-today');

      // Seven days stays per day.
      const week = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await page.getByTestId('period-7d').click();
      expect(((await (await week).json()) as Stats).by_hour).toEqual([]);
      await ready(page, 'overview');
      await expect(page.getByTestId('charts').getAttribute('data-unit')).resolves.toBe('day');
      await expect(page.getByTestId('chart-cost').locator('figcaption').textContent()).resolves.toBe('Cost per day');
    });

    test('per-token spend: Top tokens on the overview and a spend column on Tokens, equal to /api/stats', async () => {
      const page = await signedInTab(world, token);
      await loadRoute(page, proxy.url, 'overview');
      const answer = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await visit(page, proxy, '#/overview?period=30d', 'overview');
      const url = new URL((await answer).url());
      const stats = await apiJson<Stats>(proxy, token, url.pathname + url.search);
      expect(stats.by_token.map((t) => t.token_id).sort()).toEqual([proxy.account.tokenId, appToken.token_id].sort());
      const rows = page.getByTestId('top-token-row');
      await expect(rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-token-id')))).resolves.toEqual(
        stats.by_token.map((t) => t.token_id),
      );
      const app = stats.by_token.find((t) => t.token_id === appToken.token_id)!;
      const appRow = page.locator(`[data-testid=top-token-row][data-token-id="${appToken.token_id}"]`);
      await expect(appRow.textContent()).resolves.toContain('support-bot');
      await expect(appRow.textContent()).resolves.toContain(formatCost(app));

      // The link filters the logs by that token.
      await appRow.locator('a').click();
      await ready(page, 'logs');
      expect(page.url()).toContain(`token_id=${encodeURIComponent(appToken.token_id)}`);
      await expect(
        page.getByTestId('log-row').evaluateAll((els) => els.map((el) => el.getAttribute('data-id'))),
      ).resolves.toEqual([appRequestId]);

      const tokensAnswer = page.waitForResponse((r) => r.url().includes('/api/stats'));
      await visit(page, proxy, '#/tokens?period=30d', 'tokens');
      await tokensAnswer;
      const spendSelector = `[data-testid=token-row][data-token-id="${appToken.token_id}"] [data-testid=token-spend]`;
      // The answer arriving is not the cell being drawn: until then it shows the loading placeholder.
      await page.waitForFunction(
        (selector) => document.querySelector(selector)?.textContent?.includes('$') ?? false,
        spendSelector,
      );
      const spend = page.locator(spendSelector);
      await expect(spend.textContent()).resolves.toContain(formatCost(app));
      await expect(spend.textContent()).resolves.toContain(
        app.requests === 1 ? '1 request' : `${formatInt(app.requests)} requests`,
      );
      const mine = stats.by_token.find((t) => t.token_id === proxy.account.tokenId)!;
      await expect(
        page
          .locator(`[data-testid=token-row][data-token-id="${proxy.account.tokenId}"] [data-testid=token-spend]`)
          .textContent(),
      ).resolves.toContain(formatUsd(mine.cost_usd));
    });

    test('log search: model prefix with suggestions from the period, token and dates, all in the URL', async () => {
      const page = await signedInTab(world, token);
      await visit(page, proxy, '#/logs', 'logs');
      const all = await apiJson<{ items: LogRow[] }>(proxy, token, '/api/logs?limit=50');
      const stats = await apiJson<Stats>(
        proxy,
        token,
        `/api/stats?from=${new Date(Date.now() - 30 * 86_400_000).toISOString()}`,
      );
      const suggestions = page.locator('[data-testid=logs-model-suggestions] option');
      const modelCount = new Set(stats.by_model.map((m) => m.model)).size;
      expect(
        await until(
          () => suggestions.count(),
          (n) => n === modelCount,
        ),
      ).toBe(modelCount);
      const offered = await suggestions.evaluateAll((els) => els.map((el) => (el as HTMLOptionElement).value));
      expect(offered).toEqual(expect.arrayContaining(['gpt-4o-mini-2024-07-18', 'claude-sonnet-4-6']));

      // `gpt-4o-mini` finds the dated model id the provider reported.
      await page.getByTestId('logs-filter-model').fill('gpt-4o-mini');
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs?') && r.url().includes('model=gpt-4o-mini')),
        page.getByTestId('logs-apply').click(),
      ]);
      await ready(page, 'logs');
      expect(page.url()).toContain('model=gpt-4o-mini');
      const expected = all.items.filter((r) => r.model.startsWith('gpt-4o-mini')).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(all.items.some((r) => r.model === 'gpt-4o-mini')).toBe(false);
      await expect(
        page.getByTestId('log-row').evaluateAll((els) => els.map((el) => el.getAttribute('data-id'))),
      ).resolves.toEqual(expected);

      // Token and date range, then a reload keeps all of it (it lives in the URL).
      const today = await page.evaluate(() => {
        const d = new Date();
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      });
      await page.getByTestId('logs-filter-model').fill('');
      await page.getByTestId('logs-filter-token').selectOption(appToken.token_id);
      await page.getByTestId('logs-filter-from').fill(today);
      await page.getByTestId('logs-filter-to').fill(today);
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs?') && r.url().includes('token_id=')),
        page.getByTestId('logs-apply').click(),
      ]);
      await ready(page, 'logs');
      expect(page.url()).toContain(`from=${today}`);
      await page.reload();
      await ready(page, 'logs');
      await expect(page.getByTestId('logs-filter-token').inputValue()).resolves.toBe(appToken.token_id);
      await expect(page.getByTestId('logs-filter-from').inputValue()).resolves.toBe(today);
      await expect(
        page.getByTestId('log-row').evaluateAll((els) => els.map((el) => el.getAttribute('data-id'))),
      ).resolves.toEqual([appRequestId]);

      // A range that ended yesterday holds none of today's requests.
      const yesterday = await page.evaluate(() => {
        const d = new Date(Date.now() - 86_400_000);
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      });
      await visit(page, proxy, `#/logs?from=${yesterday}&to=${yesterday}`, 'logs');
      await page.getByTestId('logs-empty').waitFor();
    });
  });
