/**
 * A pooled key the provider refused is shown failing on Integrations (docs/fallbacks.md, "Key
 * pools"), beside the key that now serves, each by its label and last characters only.
 */
import { fakeProviderKey } from '../support/proxy-server';
import { eventually } from '../support/patience';
import { callThroughSdk } from '../support/sdk-clients';
import { type BrowserWorld, openSignedIn } from './browser-harness';

export const keyPoolTests = (world: BrowserWorld) =>
  describe('a key pool on Integrations', () => {
    test('a key answering 401 is shown failing, the next key ok', async () => {
      const { proxy } = world;
      const account = await proxy.createAccount('pool-page');
      const first = await proxy.saveKey(account.token, 'prov-b');
      const second = fakeProviderKey('prov-b');
      proxy.secrets.add(second);
      const saved = await proxy.api('/api/keys/prov-b/backup', {
        method: 'PUT',
        token: account.token,
        body: { key: second },
      });
      expect(saved.status).toBe(200);
      proxy.fakes.fakes['prov-b'].next({ status: 401, errorMessage: 'Incorrect API key provided' });
      await callThroughSdk({ proxyBase: proxy.proxyBase, token: account.token, provider: 'prov-b', stream: false });
      const marked = await eventually(async () => {
        const answer = await proxy.api('/api/keys', { token: account.token });
        const { keys } = (await answer.json()) as { keys: Array<{ label: string; state: string }> };
        return keys.some((k) => k.label === 'default' && k.state === 'failing') ? true : undefined;
      });
      expect(marked).toBe(true);

      const page = await openSignedIn(world, account.token, 'integrations');
      await page.locator('[data-testid=page-integrations][data-state=ready]').waitFor();
      await expect(page.getByTestId('key-pool-prov-b-default').textContent()).resolves.toBe(
        `default …${first.slice(-4)} failing`,
      );
      await expect(page.getByTestId('key-pool-prov-b-backup').textContent()).resolves.toBe(
        `backup …${second.slice(-4)} ok`,
      );
      const html = await page.content();
      expect(html).not.toContain(first);
      expect(html).not.toContain(second);
    });
  });
