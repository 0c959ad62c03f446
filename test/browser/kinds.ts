/**
 * The Logs page shows each row's endpoint kind and filters by it, against the
 * real local server: a chat completion, an embeddings call and a model list.
 */
import type { Account } from '../support/proxy-server';
import { overflowsHorizontally, type BrowserWorld, openSignedIn } from './browser-harness';

export const kindsTests = (world: BrowserWorld) =>
  describe('Logs page: endpoint kinds', () => {
    let account: Account;

    beforeAll(async () => {
      const { proxy } = world;
      account = await proxy.createAccount('kinds');
      await proxy.saveKey(account.token, 'prov-b');
      const headers = { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' };
      const base = `${proxy.proxyBase}/prov-b/v1`;
      await (
        await fetch(`${base}/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        })
      ).text();
      await (
        await fetch(`${base}/embeddings`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }),
        })
      ).text();
      await (await fetch(`${base}/models`, { headers })).text();
      await proxy.waitForRows(account.token, 3);
    });

    test('each row shows its kind; the Endpoint filter asks /api/logs for that kind only', async () => {
      const page = await openSignedIn(world, account.token, 'logs');
      await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
      const shown = await page.getByTestId('log-kind').allTextContents();
      expect(shown.map((text) => text.trim())).toEqual(['models', 'embeddings', 'chat']);

      await page.getByTestId('logs-filter-kind').selectOption('embeddings');
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/logs') && r.url().includes('kind=embeddings')),
        page.getByTestId('logs-apply').click(),
      ]);
      await page.locator('[data-testid=page-logs][data-state=ready]').waitFor();
      expect(page.url()).toContain('kind=embeddings');
      const kinds = await page
        .getByTestId('log-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
      expect(kinds).toEqual(['embeddings']);
      expect(await overflowsHorizontally(page)).toBe(false);
    });
  });
