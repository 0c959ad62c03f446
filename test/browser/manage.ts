/**
 * Managing an account in the browser: provider keys on Integrations and app tokens on Tokens,
 * checked against the API and against the proxy itself; keyboard use; a session whose token is revoked.
 */
import { fakeProviderKey } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';
import { newTab, type BrowserWorld, openSignedIn } from './browser-harness';

export const manageTests = (world: BrowserWorld) =>
  describe('managing the account in the dashboard', () => {
    test('a provider key is saved, used for stored mode, shown only as a hint, and deleted', async () => {
      const account = await world.proxy.createAccount('keys');
      const key = fakeProviderKey('prov-d');
      world.proxy.secrets.add(key);
      const page = await openSignedIn(world, account.token, 'integrations');
      for (const provider of ['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e']) {
        await expect(page.getByTestId(`key-badge-${provider}`).textContent()).resolves.toBe('No key');
      }
      const input = page.getByTestId('key-input-prov-d');
      await expect(input.getAttribute('type')).resolves.toBe('password');
      await input.fill(key);
      await page.getByTestId('key-save-prov-d').click();
      await page.getByText('Key saved.').waitFor();
      await expect(input.inputValue()).resolves.toBe('');
      await expect(page.getByTestId('key-hint-prov-d').textContent()).resolves.toBe(`…${key.slice(-4)}`);
      await expect(page.getByTestId('key-badge-prov-d').textContent()).resolves.toBe('Key saved');
      expect(await page.content()).not.toContain(key);

      const listed = (await (await world.proxy.api('/api/keys', { token: account.token })).json()) as {
        keys: Array<{ provider: string; hint: string }>;
      };
      expect(listed.keys).toEqual([expect.objectContaining({ provider: 'prov-d', hint: `…${key.slice(-4)}` })]);
      const fake = world.proxy.fakes.fakes['prov-d'];
      const before = fake.requests.length;
      await callThroughSdk({
        proxyBase: world.proxy.proxyBase,
        token: account.token,
        provider: 'prov-d',
        stream: false,
      });
      expect(fake.requests[before]?.headers.authorization).toBe(`Bearer ${key}`);

      // After a reload the page still knows only the hint.
      await page.reload();
      await page.locator('[data-testid=page-integrations][data-state=ready]').waitFor();
      await expect(page.getByTestId('key-hint-prov-d').textContent()).resolves.toBe(`…${key.slice(-4)}`);

      await page.getByTestId('key-delete-prov-d').click();
      await page.getByTestId('key-delete-prov-d-confirm').click();
      await page.getByText('Key deleted.').waitFor();
      await expect(page.getByTestId('key-badge-prov-d').textContent()).resolves.toBe('No key');
      const after = (await (await world.proxy.api('/api/keys', { token: account.token })).json()) as {
        keys: unknown[];
      };
      expect(after.keys).toEqual([]);
      await expect(
        callThroughSdk({ proxyBase: world.proxy.proxyBase, token: account.token, provider: 'prov-d', stream: false }),
      ).rejects.toMatchObject({ status: 400 });
    });

    test('an app token is shown once, works for the proxy but not the dashboard, and is revoked', async () => {
      const account = await world.proxy.createAccount('tokens');
      await world.proxy.saveKey(account.token, 'prov-b');
      const page = await openSignedIn(world, account.token, 'tokens');
      await page.getByTestId('token-name').fill('support-bot');
      await page.getByTestId('token-create').click();
      const secret = ((await page.getByTestId('token-secret').textContent()) ?? '').trim();
      world.proxy.secrets.add(secret);
      expect(secret).toMatch(/^sk-proxy-/);
      await expect(page.getByTestId('token-copy').isVisible()).resolves.toBe(true);
      const row = page.locator('[data-testid=token-row]', { hasText: 'support-bot' });
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain('proxy');
      await expect(row.textContent()).resolves.not.toContain('manage');

      const reply = await callThroughSdk({
        proxyBase: world.proxy.proxyBase,
        token: secret,
        provider: 'prov-b',
        stream: false,
      });
      expect(reply.text.length).toBeGreaterThan(0);
      const asManager = await world.proxy.api('/api/keys', { token: secret });
      expect(asManager.status).toBe(403);

      // Shown once: gone after "Done" and after a reload.
      await page.getByTestId('token-created-done').click();
      await expect(page.getByTestId('token-secret').count()).resolves.toBe(0);
      await page.reload();
      await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
      expect(await page.content()).not.toContain(secret);

      await row.getByTestId('token-revoke').click();
      await row.getByTestId('token-revoke-confirm').click();
      await row.getByTestId('token-revoked').waitFor();
      await expect(row.getAttribute('data-revoked')).resolves.toBe('true');
      await expect(
        callThroughSdk({ proxyBase: world.proxy.proxyBase, token: secret, provider: 'prov-b', stream: false }),
      ).rejects.toMatchObject({ status: 401 });
    });

    test('sign in and moving between pages work with the keyboard alone', async () => {
      const { context, page } = await newTab(world.browser);
      try {
        await page.goto(`${world.proxy.url}/`);
        // The token field has focus on arrival; Enter submits.
        await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'signin-token');
        await page.keyboard.type(world.proxy.account.token);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
        let reachedLogs = false;
        for (let i = 0; i < 8 && !reachedLogs; i++) {
          await page.keyboard.press('Tab');
          reachedLogs = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'nav-logs');
        }
        expect(reachedLogs).toBe(true);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=page-logs]').waitFor();
        // Focus moves to the new page's heading, so a screen reader announces where the user is.
        await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Logs');
      } finally {
        await context.close();
      }
    });

    test('a session whose token is revoked ends with a message', async () => {
      const account = await world.proxy.createAccount('revoked');
      const page = await openSignedIn(world, account.token, 'overview');
      const revoked = await world.proxy.api(`/api/admin/tokens/${account.tokenId}`, { method: 'DELETE' });
      expect(revoked.status).toBe(204);
      await page.getByTestId('overview-refresh').click();
      await expect(page.getByTestId('signin-notice').textContent()).resolves.toMatch(/revoked or is no longer valid/);
      await page.getByTestId('signin-token').fill(account.token);
      await page.getByTestId('signin-submit').click();
      await expect(page.getByTestId('signin-error').textContent()).resolves.toMatch(/wrong or has been revoked/);
    });
  });
