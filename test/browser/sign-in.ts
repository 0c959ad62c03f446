/** Signing in through the identity provider, and what each role may do on the dashboard. */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { noAwsCredentialsEnv } from '../support/no-aws-credentials';
import { freePort, startIssuer, type Issuer } from '../support/oidc-issuer';
import type { ProxyServer } from '../support/proxy-server';
import { newTab, proxyAndBrowser, screenshot, type BrowserWorld } from './browser-harness';

export interface IssuerWorld extends BrowserWorld {
  issuer: Issuer;
}

/**
 * An identity provider on 127.0.0.1 and a server that signs in through it, on a machine with no AWS
 * credentials (neither changes what a token sign-in or another account sees). Filled in by `beforeAll`.
 */
export function issuerWorld(): IssuerWorld {
  const world = proxyAndBrowser(async () => {
    world.issuer = await startIssuer(await freePort());
    return { env: { ...world.issuer.proxyEnv, ...noAwsCredentialsEnv() } };
  }) as IssuerWorld;
  afterAll(async () => {
    await world.issuer?.stop();
  });
  return world;
}

let issuer: Issuer;
let proxy: ProxyServer;
let browser: Browser;

/** Signs in through the dashboard's button and the issuer's own login page, and lands on the overview. */
async function signInAs(login: string): Promise<Page> {
  const { page } = await newTab(browser);
  await page.goto(`${proxy.url}/`);
  await page.getByTestId('signin-oidc').click();
  // The issuer's page, not the proxy's: a login form of its own.
  await page.locator('input[name=login]').waitFor();
  expect(new URL(page.url()).origin).toBe(issuer.url);
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.locator('button[type=submit]').click();
  await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
  expect(new URL(page.url()).origin).toBe(proxy.url);
  return page;
}

/** Opens a page from the menu and waits until its data is on screen. */
async function open(page: Page, name: string): Promise<void> {
  await page.getByTestId(`nav-${name}`).click();
  await page.locator(`[data-testid=page-${name}][data-state=ready]`).waitFor();
}

export const signInTests = (world: IssuerWorld) =>
  describe('signing in to the dashboard with the identity provider', () => {
    beforeAll(async () => {
      ({ proxy, browser, issuer } = world);
      proxy.secrets.add(issuer.clientSecret);
      for (const [group, role] of [
        ['proxy-admins', 'admin'],
        ['proxy-members', 'member'],
        ['proxy-viewers', 'viewer'],
      ]) {
        const mapped = await proxy.api(`/api/admin/accounts/${proxy.account.accountId}/roles/${group}`, {
          method: 'PUT',
          body: { role },
        });
        expect(mapped.status).toBe(200);
      }
    });

    it('an admin lands on the dashboard and may change keys, prices and tokens; the change is in the Audit page', async () => {
      const page = await signInAs('alice');
      await expect(page.getByTestId('caller').getAttribute('data-role')).resolves.toBe('admin');
      await open(page, 'integrations');
      await page.getByTestId('key-input-prov-a').waitFor();
      await open(page, 'tokens');
      await page.getByTestId('token-name').fill('made by alice');
      await page.getByTestId('token-create').click();
      await page.getByTestId('token-created-done').waitFor();
      await page.getByTestId('price-add').waitFor();
      await open(page, 'audit');
      const row = page.locator('[data-testid=audit-row][data-action="token.issued"]').first();
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain('alice@example.test');
      await screenshot(page, 'audit-admin');
    });

    it('a member may issue tokens but sees no key, budget or price controls', async () => {
      const page = await signInAs('bob');
      await expect(page.getByTestId('caller').getAttribute('data-role')).resolves.toBe('member');
      await open(page, 'tokens');
      await page.getByTestId('token-create').waitFor();
      await expect(page.getByTestId('price-add').count()).resolves.toBe(0);
      // The tokens alice issued are listed, with no revoke or edit button for bob.
      await page.getByTestId('token-row').first().waitFor();
      await expect(page.getByTestId('token-revoke').count()).resolves.toBe(0);
      await expect(page.getByTestId('token-settings-edit').count()).resolves.toBe(0);
      await open(page, 'integrations');
      await expect(page.getByTestId('key-input-prov-a').count()).resolves.toBe(0);
    });

    it('a viewer reads every page and sees no control that changes anything', async () => {
      const page = await signInAs('carol');
      await expect(page.getByTestId('caller').getAttribute('data-role')).resolves.toBe('viewer');
      await open(page, 'tokens');
      await page.getByTestId('token-row').first().waitFor();
      for (const control of ['token-create', 'price-add', 'token-revoke', 'token-settings-edit'])
        await expect([control, await page.getByTestId(control).count()]).toEqual([control, 0]);
      await open(page, 'integrations');
      await expect(page.getByTestId('key-input-prov-a').count()).resolves.toBe(0);
      await open(page, 'audit');
      const rows = await page.getByTestId('audit-row').count();
      expect(rows).toBeGreaterThan(0);
      // Filtered to one action, then downloaded: the CSV holds what the filter shows, every field of it.
      await page.getByTestId('audit-action').selectOption('role.mapped');
      await page.waitForFunction(() => {
        const shown = [...document.querySelectorAll('[data-testid=audit-row]')];
        return shown.length === 3 && shown.every((row) => row.getAttribute('data-action') === 'role.mapped');
      });
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-csv').click()]);
      const csv = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\r\n');
      expect(csv[0]).toBe('at,actor,actor_name,address,action,target,before,after');
      expect(csv.slice(1).map((line) => line.split(',').slice(4, 6).join(','))).toEqual([
        'role.mapped,group:proxy-viewers',
        'role.mapped,group:proxy-members',
        'role.mapped,group:proxy-admins',
      ]);
      // Signing out ends the session: the sign-in page is back, and a reload does not restore it.
      await page.getByTestId('signout').click();
      await page.getByTestId('signin-oidc').waitFor();
      await page.reload();
      await page.getByTestId('signin-oidc').waitFor();
    });
  });
