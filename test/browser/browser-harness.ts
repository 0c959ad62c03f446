/**
 * Headless Chromium for the dashboard tests: Debian's `chromium` driven by playwright-core
 * (playwright cannot download its own browsers here).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { STORAGE_KEY as SESSION_KEY } from '../../lambda/dashboard/src/session';
import { startProxy, type ProxyServer, type StartOptions } from '../support/proxy-server';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = resolve(__dirname, '../../test-artifacts/screenshots');

const ciValue = (process.env.CI ?? '').toLowerCase();
const IN_CI = ciValue !== '' && ciValue !== 'false' && ciValue !== '0';

/**
 * Outside CI a machine without chromium skips the browser tests (with a message saying so);
 * in CI the browser is part of the setup, so its absence is a failure.
 */
export function browserAvailability(): 'present' | 'skip' | 'fail' {
  if (existsSync(CHROMIUM_PATH)) return 'present';
  return IN_CI ? 'fail' : 'skip';
}

export const MISSING_BROWSER = `chromium not found at ${CHROMIUM_PATH}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH).`;

/** `describe` for tests that need the browser: skipped with a message, or failing in CI, when it is missing. */
export function describeInBrowser(name: string, body: () => void): void {
  const availability = browserAvailability();
  if (availability === 'skip') console.warn(`Skipping "${name}": ${MISSING_BROWSER}`);
  if (availability === 'fail') {
    test('chromium is installed (required when CI is set)', () => {
      throw new Error(MISSING_BROWSER);
    });
  }
  (availability === 'present' ? describe : describe.skip)(name, body);
}

/** What a journey's tests share: one local server, one Chromium and one tab, filled in by `beforeAll`. */
export interface BrowserWorld {
  proxy: ProxyServer;
  browser: Browser;
  /** The tab tests take turns on (`openSignedIn`): a context of its own costs a test more than its page. */
  tab: Page;
}

/**
 * A local server and a browser for the tests of one `describe` (a journey: every topic of a file
 * shares them, each in its own account where its data must not meet another's), stopped after them.
 * `options` may be computed first (a server whose environment names another server's address).
 */
export function proxyAndBrowser(options?: StartOptions | (() => Promise<StartOptions>)): BrowserWorld {
  const world = {} as BrowserWorld;
  beforeAll(async () => {
    const startOptions = typeof options === 'function' ? await options() : options;
    [world.proxy, world.browser] = await Promise.all([startProxy(startOptions), launchBrowser()]);
    world.tab = (await newTab(world.browser)).page;
  });
  afterAll(async () => {
    await world.browser?.close();
    await world.proxy?.stop();
  });
  return world;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      // Without a GPU its process only composites in software: on a thread of the browser's own
      // process instead, a journey costs about a seventh less CPU (44.9 → 38.7 CPU-s measured).
      '--in-process-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  // The narrowest phone width still common (iPhone SE/mini class).
  phone: { width: 375, height: 740 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

declare global {
  interface Window {
    __layoutShift: number;
    __pageErrors: string[];
  }
}

/**
 * A fresh tab (sessionStorage is per tab) that adds up layout-shift scores and keeps uncaught errors,
 * so a test can check that data arriving never moves what is already on screen.
 */
export async function newTab(
  browser: Browser,
  viewport: ViewportName = 'laptop',
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: VIEWPORTS[viewport],
    deviceScaleFactor: 1,
    colorScheme: options.colorScheme ?? 'light',
  });
  await context.addInitScript(() => {
    window.__layoutShift = 0;
    window.__pageErrors = [];
    addEventListener('error', (event) => window.__pageErrors.push(String(event.message)));
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
        if (!entry.hadRecentInput) window.__layoutShift += entry.value;
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
  const page = await context.newPage();
  return { context, page };
}

/** Resolves once the page has rendered two more frames: what it drew after its data arrived is on screen. */
export async function renderedFrames(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))),
  );
}

export async function layoutShiftSince(page: Page, reset = true): Promise<number> {
  return page.evaluate((clear) => {
    const value = window.__layoutShift;
    if (clear) window.__layoutShift = 0;
    return value;
  }, reset);
}

export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByTestId('signin-token').fill(token);
  await page.getByTestId('signin-submit').click();
  await page.locator('[data-testid=page-overview][data-state=ready]').waitFor();
}

export type PageName = 'overview' | 'logs' | 'integrations' | 'tokens';

/**
 * The journey's tab, ready for a test as a new one would be: `size` wide, in the light scheme, its
 * storage empty, on a small document of the server's origin, so the next navigation loads the
 * dashboard from scratch and nothing of the previous test's page is left.
 */
export async function freshTab(world: BrowserWorld, size: ViewportName = 'laptop'): Promise<Page> {
  const page = world.tab;
  await page.setViewportSize(VIEWPORTS[size]);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${world.proxy.url}/api/health`);
  await page.evaluate(() => {
    sessionStorage.clear();
    localStorage.clear();
  });
  return page;
}

/**
 * `freshTab`, signed in with `token` as the sign-in form leaves it (in sessionStorage): a test whose
 * subject is not the sign-in skips the form and the Overview it lands on (the form has tests of its own).
 */
export async function signedInTab(world: BrowserWorld, token: string, size: ViewportName = 'laptop'): Promise<Page> {
  const page = await freshTab(world, size);
  await page.evaluate(([key, value]) => sessionStorage.setItem(key, value), [SESSION_KEY, token]);
  return page;
}

/** Goes to `#/name` (and `query`) and waits until the page's data is on screen. */
export async function loadRoute(page: Page, baseUrl: string, name: PageName, query = ''): Promise<void> {
  await page.goto(`${baseUrl}/#/${name}${query}`);
  await page.locator(`[data-testid=page-${name}][data-state=ready]`).waitFor();
}

/** `signedInTab`, then the dashboard loaded on `#/name` (and `query`) with its data on screen. */
export async function openSignedIn(
  world: BrowserWorld,
  token: string,
  name: PageName,
  { size = 'laptop', query = '' }: { size?: ViewportName; query?: string } = {},
): Promise<Page> {
  const page = await signedInTab(world, token, size);
  await loadRoute(page, world.proxy.url, name, query);
  return page;
}

/** Navigates by clicking the menu, as a user would, and waits until the page's data is on screen. */
export async function openPage(page: Page, name: PageName): Promise<void> {
  await page.getByTestId(`nav-${name}`).click();
  await page.locator(`[data-testid=page-${name}][data-state=ready]`).waitFor();
}

/**
 * With `SCREENSHOTS=1`, saves a page (whole, by default; `fullPage: false` for what is on screen, such
 * as an open panel) or one element to look at by eye; nothing compares them, so a run without the
 * variable takes none.
 */
export async function screenshot(target: Page | Locator, name: string, { fullPage = true } = {}): Promise<void> {
  if (!process.env.SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await ('goto' in target ? target.screenshot({ path, fullPage }) : target.screenshot({ path }));
}

/** True when the page is wider than the window: something does not fit a phone. */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
}
