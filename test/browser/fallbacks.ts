/**
 * The account's default fallbacks in the browser: set in their card on the Tokens page (a refusal
 * shown with the field named), used by a request that names none, their limits edited, and removed;
 * a viewer sees them without the form.
 */
import { screenshot, type BrowserWorld, openSignedIn } from './browser-harness';
import { callThroughSdk, TEST_MODELS } from '../support/sdk-clients';

export const fallbacksTests = (world: BrowserWorld) =>
  describe('default fallbacks in the dashboard', () => {
    test('set, refused with the field named, used by a request, limits edited, removed', async () => {
      const account = await world.proxy.createAccount('fallbacks-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      const page = await openSignedIn(world, account.token, 'tokens');
      const card = page.getByTestId('default-fallbacks');
      await card.getByTestId('fallbacks-empty').waitFor();

      await card.getByTestId('fallback-new-provider').selectOption('prov-b');
      await card.getByTestId('fallback-new-model').fill(TEST_MODELS['prov-b']);
      await card.getByTestId('fallback-new-list').fill('prov-a/claude-sonnet-4-5');
      await card.getByTestId('fallback-new-save').click();
      await expect(card.getByTestId('fallback-error').textContent()).resolves.toContain('same API shape');

      await card.getByTestId('fallback-new-list').fill('gpt-4o-mini, prov-d/mistral-small-latest');
      await card.getByTestId('fallback-new-save').click();
      const row = card.locator(`[data-testid=fallback-row][data-key="prov-b/${TEST_MODELS['prov-b']}"]`);
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain('gpt-4o-mini → prov-d/mistral-small-latest');

      // A request that names no fallback gets them.
      for (let i = 0; i < 3; i++) world.proxy.fakes.fakes['prov-b'].next({ status: 503 });
      const served = await callThroughSdk({
        proxyBase: world.proxy.proxyBase,
        provider: 'prov-b',
        token: account.token,
        stream: false,
      });
      expect(served.model).toBe('gpt-4o-mini');

      await card.getByTestId('fallback-limits-edit').click();
      await card.getByTestId('fallback-first-token').fill('4');
      await card.getByTestId('fallback-limits-save').click();
      await card.getByTestId('fallback-limits').filter({ hasText: 'First token within 4 s' }).waitFor();
      await screenshot(page, 'default-fallbacks-card');
      const stored = (await (await world.proxy.api('/api/fallbacks', { token: account.token })).json()) as {
        first_token_timeout: number;
        stall_timeout: number | null;
      };
      expect(stored).toMatchObject({ first_token_timeout: 4, stall_timeout: null });

      await row.getByTestId('fallback-remove').click();
      await row.getByTestId('fallback-remove-confirm').click();
      await card.getByTestId('fallbacks-empty').waitFor();
      const after = (await (await world.proxy.api('/api/fallbacks', { token: account.token })).json()) as {
        fallbacks: unknown[];
      };
      expect(after.fallbacks).toEqual([]);
    });

    test("a token's own defaults are edited in its row, refused with the server's message, and win over the account's", async () => {
      const account = await world.proxy.createAccount('token-fallbacks-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      const issued = (await (
        await world.proxy.api('/api/tokens', { token: account.token, body: { name: 'app' } })
      ).json()) as { token: string; token_id: string };
      world.proxy.secrets.add(issued.token);
      const set = await world.proxy.api(`/api/fallbacks/prov-b/${TEST_MODELS['prov-b']}`, {
        method: 'PUT',
        token: account.token,
        body: { fallbacks: ['gpt-4o-mini'] },
      });
      expect(set.status).toBe(200);
      const page = await openSignedIn(world, account.token, 'tokens');
      const row = page.locator(`[data-testid=token-row][data-token-id="${issued.token_id}"]`);
      await row.getByTestId('token-settings-edit').click();
      const field = row.getByTestId('token-settings-fallbacks');
      await field.fill(`prov-b/${TEST_MODELS['prov-b']}: prov-a/claude-sonnet-4-5`);
      await row.getByTestId('token-settings-save').click();
      await expect(row.getByTestId('token-settings-error').textContent()).resolves.toContain('same API shape');
      await field.fill(`prov-b/${TEST_MODELS['prov-b']}: gpt-4.1-mini`);
      await row.getByTestId('token-settings-save').click();
      await row.getByTestId('token-fallbacks').waitFor();
      await expect(row.getByTestId('token-fallbacks').textContent()).resolves.toContain('gpt-4.1-mini');

      for (let i = 0; i < 3; i++) world.proxy.fakes.fakes['prov-b'].next({ status: 503 });
      const served = await callThroughSdk({
        proxyBase: world.proxy.proxyBase,
        provider: 'prov-b',
        token: issued.token,
        stream: false,
      });
      expect(served.model).toBe('gpt-4.1-mini');
    });

    test('a viewer sees the defaults but no form to change them', async () => {
      const account = await world.proxy.createAccount('fallbacks-viewer');
      const set = await world.proxy.api('/api/fallbacks/prov-b/gpt-4o', {
        method: 'PUT',
        token: account.token,
        body: { fallbacks: ['gpt-4o-mini'] },
      });
      expect(set.status).toBe(200);
      const viewer = (await (
        await world.proxy.api('/api/tokens', { token: account.token, body: { role: 'viewer' } })
      ).json()) as { token: string };
      const page = await openSignedIn(world, viewer.token, 'tokens');
      const card = page.getByTestId('default-fallbacks');
      await card.locator('[data-testid=fallback-row][data-key="prov-b/gpt-4o"]').waitFor();
      expect(await card.getByTestId('fallback-add').count()).toBe(0);
      expect(await card.getByTestId('fallback-limits-edit').count()).toBe(0);
    });
  });
