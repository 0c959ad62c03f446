/**
 * Budget alerts in the browser (docs/alerts.md): the budget form's "Alert at" percentages are saved
 * as `alert_at`, and once the spend passes one, the alert is listed under "Recent alerts".
 */
import type { Account } from '../support/proxy-server';
import { callProxy } from '../reliability/support/requests';
import { eventually } from '../support/patience';
import { screenshot, type BrowserWorld, openSignedIn } from './browser-harness';

export const alertsTests = (world: BrowserWorld) =>
  describe('budget alerts in the dashboard', () => {
    async function alertAt(account: Account): Promise<number[] | undefined> {
      const body = (await (await world.proxy.api('/api/tokens', { token: account.token })).json()) as {
        tokens: Array<{ token_id: string; budget: { alert_at: number[] } | null }>;
      };
      return body.tokens.find((t) => t.token_id === account.tokenId)!.budget?.alert_at;
    }

    test('a token budget alerting at 50 % and 100 % is set on the form, and its alert is listed once reached', async () => {
      const account = await world.proxy.createAccount('alerts-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      const page = await openSignedIn(world, account.token, 'tokens');
      await page.getByTestId('recent-alerts-empty').waitFor();
      const row = page.locator(`[data-testid=token-row][data-token-id="${account.tokenId}"]`);
      await row.getByTestId('token-budget-edit').click();
      await expect(row.getByTestId('token-budget-alert-at').inputValue()).resolves.toBe('80, 100');
      await row.getByTestId('token-budget-limit').fill('0.000001');
      await row.getByTestId('token-budget-alert-at').fill('150');
      await row.getByTestId('token-budget-save').click();
      await expect(row.getByTestId('token-budget-error').textContent()).resolves.toContain('alert_at');
      await row.getByTestId('token-budget-alert-at').fill('50, 100');
      await row.getByTestId('token-budget-save').click();
      await row.getByTestId('token-budget-bar').waitFor();
      expect(await alertAt(account)).toEqual([0.5, 1]);

      // One request spends past the whole limit: both fractions are reached.
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: account.token })).status).toBe(200);
      // Delivery runs beside the fold (docs/alerts.md): a row reads Queued until its delivery is done.
      // The API is asked until both are delivered, and the page loaded once then (a reload per poll
      // cost more than the rest of the test).
      const listed = await eventually(async () => {
        const answer = await world.proxy.api('/api/alerts', { token: account.token });
        const { alerts } = (await answer.json()) as { alerts: Array<{ state: string }> };
        return alerts.length === 2 && alerts.every((alert) => alert.state === 'delivered') ? alerts.length : undefined;
      });
      expect(listed).toBe(2);
      await page.reload();
      await page.getByTestId('recent-alert-row').nth(1).waitFor();
      const texts = await page.getByTestId('recent-alert-row').allTextContents();
      for (const text of texts) {
        // The text names the token by its name (this one has none), never by its id.
        expect(text).toContain('proxy token');
        expect(text).not.toContain(account.tokenId);
        expect(text).toContain('no webhook or topic set');
      }
      const states = await page
        .getByTestId('recent-alert-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
      expect(states).toEqual(['delivered', 'delivered']);
      expect(texts.join('\n')).toContain('alert at 50%');
      expect(texts.join('\n')).toContain('alert at 100%');
      await page.getByTestId('recent-alerts').scrollIntoViewIfNeeded();
      await screenshot(page, 'budget-alerts-recent');
    });
  });
