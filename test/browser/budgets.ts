/**
 * Budgets in the browser: a token's budget set, changed and removed on the Tokens page, requester
 * budgets in their section, and the Overview's warning banner once a budget passes 80 %, each checked
 * against the management API and against the proxy itself.
 */
import type { Page } from 'playwright-core';
import type { Account } from '../support/proxy-server';
import { callProxy } from '../reliability/support/requests';
import { overflowsHorizontally, screenshot, type BrowserWorld, openSignedIn } from './browser-harness';
import { eventually } from '../support/patience';

interface BudgetAnswer {
  limit_usd: number;
  period: string;
  spent_usd: number;
  resets_at: string | null;
}

export const budgetsTests = (world: BrowserWorld) =>
  describe('budgets in the dashboard', () => {
    async function tokenBudget(account: Account): Promise<BudgetAnswer | null> {
      const body = (await (await world.proxy.api('/api/tokens', { token: account.token })).json()) as {
        tokens: Array<{ token_id: string; budget: BudgetAnswer | null }>;
      };
      return body.tokens.find((t) => t.token_id === account.tokenId)!.budget;
    }

    async function waitForTokenSpend(account: Account, atLeast: number): Promise<void> {
      await eventually(async () => (((await tokenBudget(account))?.spent_usd ?? 0) >= atLeast ? true : undefined));
    }

    const sessionRow = (page: Page, account: Account) =>
      page.locator(`[data-testid=token-row][data-token-id="${account.tokenId}"]`);

    test('a token budget is set, changed and removed on the Tokens page, and the proxy enforces it', async () => {
      const account = await world.proxy.createAccount('token-budget-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      const page = await openSignedIn(world, account.token, 'tokens');
      const row = sessionRow(page, account);
      await expect(row.getByTestId('token-budget-none').textContent()).resolves.toBe('No budget');

      // Set: a server-side refusal is shown next to the form, naming the field.
      await row.getByTestId('token-budget-edit').click();
      await row.getByTestId('token-budget-limit').fill('0');
      await row.getByTestId('token-budget-save').click();
      await expect(row.getByTestId('token-budget-error').textContent()).resolves.toContain('limit_usd');
      await row.getByTestId('token-budget-limit').fill('25');
      await row.getByTestId('token-budget-period').selectOption('month');
      await row.getByTestId('token-budget-save').click();
      await row.getByTestId('token-budget-bar').waitFor();
      await expect(row.getByTestId('token-budget-bar-amounts').textContent()).resolves.toBe('$0.00 of $25.00');
      await expect(row.getByTestId('token-budget-bar-period').textContent()).resolves.toBe('per month');
      await expect(row.getByTestId('token-budget-bar-reset').textContent()).resolves.toMatch(/resets /);
      expect(await tokenBudget(account)).toMatchObject({ limit_usd: 25, period: 'month', spent_usd: 0 });
      await screenshot(page, 'budgets-token-set');

      // Change to a limit one request uses up, spend it, and the bar shows it used up.
      await row.getByTestId('token-budget-edit').click();
      await expect(row.getByTestId('token-budget-limit').inputValue()).resolves.toBe('25');
      await row.getByTestId('token-budget-limit').fill('0.000001');
      await row.getByTestId('token-budget-period').selectOption('day');
      await row.getByTestId('token-budget-save').click();
      await row.getByTestId('token-budget-bar-period').filter({ hasText: 'per day' }).waitFor();
      expect(await tokenBudget(account)).toMatchObject({ limit_usd: 0.000001, period: 'day' });
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: account.token })).status).toBe(200);
      await waitForTokenSpend(account, 0.000001);
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: account.token })).status).toBe(402);
      await page.reload();
      await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
      await expect(row.getByTestId('token-budget-bar').getAttribute('data-level')).resolves.toBe('over');
      await expect(row.getByTestId('token-budget-bar-reset').textContent()).resolves.toContain(
        'requests are refused until it resets',
      );
      await screenshot(page, 'budgets-token-used-up');

      // Remove: asked twice, then the proxy forwards again.
      await row.getByTestId('token-budget-remove').click();
      await row.getByTestId('token-budget-remove-confirm').click();
      await row.getByTestId('token-budget-none').waitFor();
      expect(await tokenBudget(account)).toBeNull();
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: account.token })).status).toBe(200);
      expect(await page.evaluate(() => window.__pageErrors)).toEqual([]);
    });

    test('requester budgets are added, changed and removed in their section', async () => {
      const account = await world.proxy.createAccount('requester-budget-ui');
      const page = await openSignedIn(world, account.token, 'tokens');
      await page.getByTestId('requester-budgets-empty').waitFor();
      await page.getByTestId('requester-budget-new-requester').fill('intern-script');
      await page.getByTestId('requester-budget-new-limit').fill('2.5');
      await page.getByTestId('requester-budget-new-period').selectOption('day');
      await page.getByTestId('requester-budget-new-save').click();
      const row = page.locator('[data-testid=requester-budget-row][data-requester="intern-script"]');
      await row.waitFor();
      await expect(row.getByTestId('requester-budget-bar-amounts').textContent()).resolves.toBe('$0.00 of $2.50');
      await expect(row.getByTestId('requester-budget-bar-period').textContent()).resolves.toBe('per day');
      const listed = async () =>
        (
          (await (await world.proxy.api('/api/budgets', { token: account.token })).json()) as {
            requesters: Array<BudgetAnswer & { requester: string }>;
          }
        ).requesters;
      expect(await listed()).toEqual([
        expect.objectContaining({ requester: 'intern-script', limit_usd: 2.5, period: 'day' }),
      ]);

      await row.getByTestId('requester-budget-edit').click();
      await row.getByTestId('requester-budget-limit').fill('40');
      await row.getByTestId('requester-budget-period').selectOption('total');
      await row.getByTestId('requester-budget-save').click();
      await row.getByTestId('requester-budget-bar-reset').filter({ hasText: 'never resets' }).waitFor();
      expect(await listed()).toEqual([
        expect.objectContaining({ requester: 'intern-script', limit_usd: 40, period: 'total', resets_at: null }),
      ]);
      await screenshot(page, 'budgets-requesters');

      await row.getByTestId('requester-budget-remove').click();
      await row.getByTestId('requester-budget-remove-confirm').click();
      await page.getByTestId('requester-budgets-empty').waitFor();
      expect(await listed()).toEqual([]);
    });

    test('the Overview warns about every budget past 80 %, and only those', async () => {
      const account = await world.proxy.createAccount('banner');
      await world.proxy.saveKey(account.token, 'prov-b');
      const page = await openSignedIn(world, account.token, 'overview');
      expect(await page.getByTestId('budget-banner').count()).toBe(0);

      // Spend something, then set budgets around it: one used up, one at ~90 %, one far from its limit.
      expect(
        (
          await callProxy(world.proxy, {
            provider: 'prov-b',
            token: account.token,
            headers: { 'x-proxy-user': 'ana' },
          })
        ).status,
      ).toBe(200);
      await world.proxy.api(`/api/tokens/${account.tokenId}/budget`, {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 1000, period: 'month' },
      });
      await waitForTokenSpend(account, 1e-9);
      const spent = (await tokenBudget(account))!.spent_usd;
      const put = (path: string, limit: number, period: string) =>
        world.proxy.api(path, { method: 'PUT', token: account.token, body: { limit_usd: limit, period } });
      await put(`/api/tokens/${account.tokenId}/budget`, Math.ceil((spent / 0.9) * 1e6) / 1e6, 'month');
      await put('/api/budgets/requesters/ana', 0.000001, 'day');
      await put('/api/budgets/requesters/ben', 1000, 'total');

      await page.reload();
      await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
      const banner = page.getByTestId('budget-banner');
      await banner.waitFor();
      const items = banner.getByTestId('budget-banner-item');
      await expect(items.count()).resolves.toBe(2);
      await expect(items.nth(0).textContent()).resolves.toMatch(
        /^Requester “ana”: .* per day \(\d+ %\), used up: requests are refused with 402, resets /,
      );
      await expect(items.nth(0).getAttribute('data-level')).resolves.toBe('over');
      await expect(items.nth(1).textContent()).resolves.toMatch(
        /^Token “banner[^”]*”: .* per month \((8\d|9\d) %\), resets /,
      );
      await expect(items.nth(1).getAttribute('data-level')).resolves.toBe('warn');
      await expect(banner.textContent()).resolves.not.toContain('ben');
      await expect(banner.textContent()).resolves.toContain('2 budgets are past 80 % of the limit.');
      await screenshot(page, 'budgets-overview-banner');

      await banner.getByTestId('budget-banner-manage').click();
      await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
    });

    test('on a phone the budget controls fit the screen', async () => {
      const account = await world.proxy.createAccount('phone');
      await world.proxy.api(`/api/tokens/${account.tokenId}/budget`, {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 12.5, period: 'month' },
      });
      await world.proxy.api('/api/budgets/requesters/a-rather-long-requester-label-for-a-phone', {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 3, period: 'day' },
      });
      const page = await openSignedIn(world, account.token, 'tokens', { size: 'phone' });
      await page.getByTestId('requester-budget-row').waitFor();
      await sessionRow(page, account).getByTestId('token-budget-edit').click();
      expect(await overflowsHorizontally(page)).toBe(false);
      await screenshot(page, 'budgets-phone');
    });
  });
