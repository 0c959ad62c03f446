/**
 * What the reading journey's topics share: a local server with traffic from two tokens, and small
 * page helpers.
 */
import type { Page } from 'playwright-core';
import type { ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';
import { eventually } from '../support/patience';
import { proxyAndBrowser, type BrowserWorld } from './browser-harness';
import { sendTraffic, type SentTraffic } from './traffic';

/** Polls until `check` holds, for counts that grow as requests arrive; out of time, the last count (for the assertion to show). */
export async function until(read: () => Promise<number> | number, check: (n: number) => boolean): Promise<number> {
  const held = await eventually(async () => {
    const value = await read();
    return check(value) ? value : undefined;
  });
  return held ?? read();
}

export async function apiJson<T>(proxy: ProxyServer, token: string, path: string): Promise<T> {
  const response = await proxy.api(path, { token });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export async function ready(page: Page, name: string): Promise<void> {
  await page.locator(`[data-testid=page-${name}][data-state=ready]`).waitFor();
}

/** Goes to a hash route from scratch and waits for its data. */
export async function visit(page: Page, proxy: ProxyServer, hash: string, name: string): Promise<void> {
  await page.goto(`${proxy.url}/${hash}`);
  await ready(page, name);
}

export function rgb(page: Page, selector: string, property: 'backgroundColor' | 'color'): Promise<string> {
  return page
    .locator(selector)
    .first()
    .evaluate((element, prop) => getComputedStyle(element)[prop], property);
}

export interface DepthWorld extends BrowserWorld {
  token: string;
  traffic: SentTraffic;
  appToken: { token: string; token_id: string };
  appRequestId: string;
}

/**
 * A server with the usual traffic, a second token ("support-bot") and one request made with it:
 * `traffic.rows + 1` rows in the suite's account. Filled in by `beforeAll`.
 */
export function depthWorld(): DepthWorld {
  const world = proxyAndBrowser() as DepthWorld;
  beforeAll(async () => {
    const { proxy } = world;
    const token = proxy.account.token;
    const traffic = await sendTraffic(proxy, token);
    const appToken = (await (await proxy.api('/api/tokens', { token, body: { name: 'support-bot' } })).json()) as {
      token: string;
      token_id: string;
    };
    proxy.secrets.add(appToken.token);
    const appRequestId = (
      await callThroughSdk({
        proxyBase: proxy.proxyBase,
        token: appToken.token,
        provider: 'prov-a',
        stream: false,
        headers: { 'x-proxy-user': 'dana' },
      })
    ).requestId;
    await proxy.waitForRows(token, traffic.rows + 1);
    Object.assign(world, { token, traffic, appToken, appRequestId });
  });
  return world;
}
