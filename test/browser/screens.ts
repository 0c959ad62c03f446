/**
 * Every page at laptop and phone sizes: screenshots for people to look at (test-artifacts/screenshots),
 * and the checks a screenshot cannot make on its own: nothing wider than a phone, no layout shift
 * while data loads, no script errors.
 */
import type { Page } from 'playwright-core';
import type { ProxyServer } from '../support/proxy-server';
import {
  layoutShiftSince,
  overflowsHorizontally,
  renderedFrames,
  screenshot,
  signIn,
  VIEWPORTS,
  type ViewportName,
  freshTab,
} from './browser-harness';
import type { DepthWorld } from './depth-setup';

type PageName = 'overview' | 'logs' | 'integrations' | 'tokens';

/** Loads a page from scratch (not a click: input would hide layout shifts from the measurement). */
async function loadPage(page: Page, baseUrl: string, name: PageName): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${baseUrl}/#/${name}`);
  await page.locator(`[data-testid=page-${name}][data-state=ready]`).waitFor();
  // Charts draw after the data arrives, in the frames that follow.
  await renderedFrames(page);
}

/** On the journey's traffic: the cached and failed rows give the logs' badges something to show. */
export const screensTests = (world: DepthWorld) =>
  describe('dashboard screens', () => {
    let proxy: ProxyServer;

    beforeAll(() => ({ proxy } = world));

    test.each(Object.keys(VIEWPORTS) as ViewportName[])(
      'every page fits a %s screen and does not jump while loading',
      async (size) => {
        const page = await freshTab(world, size);
        const problems: string[] = [];
        await page.goto(`${proxy.url}/`);
        await screenshot(page, `${size}-sign-in`);
        await page.getByTestId('signin-token').fill('sk-proxy-wrong');
        await page.getByTestId('signin-submit').click();
        await page.getByTestId('signin-error').waitFor();
        await screenshot(page, `${size}-sign-in-error`);
        await signIn(page, proxy.url, proxy.account.token);

        for (const name of ['overview', 'logs', 'integrations', 'tokens'] as PageName[]) {
          await loadPage(page, proxy.url, name);
          const shift = await layoutShiftSince(page);
          if (shift > 0.01) problems.push(`${name}: layout shift ${shift.toFixed(4)}`);
          if (await overflowsHorizontally(page)) problems.push(`${name}: wider than the ${size} screen`);
          await screenshot(page, `${size}-${name}`);
        }

        // The states worth a look beyond the first view of each page.
        await page.goto(`${proxy.url}/#/logs?cached=true`);
        await page.locator('[data-testid=badge-cached]').first().waitFor();
        await screenshot(page, `${size}-logs-cached`);
        await page.goto(`${proxy.url}/#/logs?status=error`);
        await page.locator('[data-testid=log-error]').first().waitFor();
        await screenshot(page, `${size}-logs-errors`);

        await loadPage(page, proxy.url, 'integrations');
        await page.getByTestId('snippets-prov-b').click();
        await page.getByTestId('snippet-stored-prov-b').waitFor();
        if (await overflowsHorizontally(page)) problems.push(`integrations snippets: wider than the ${size} screen`);
        await screenshot(page, `${size}-integrations-snippets`);

        await loadPage(page, proxy.url, 'tokens');
        await page.getByTestId('token-name').fill(`screenshot-${size}`);
        await page.getByTestId('token-create').click();
        const secret = (await page.getByTestId('token-secret').textContent()) ?? '';
        proxy.secrets.add(secret.trim());
        await screenshot(page, `${size}-tokens-created`);

        const errors = await page.evaluate(() => window.__pageErrors);
        problems.push(...errors.map((e) => `script error: ${e}`));
        expect(problems).toEqual([]);
      },
    );
  });
