/**
 * Tags and per-token controls in the browser (docs/tags.md), at laptop and phone widths: the Logs
 * tag filter kept in the URL, tags in a request's details, Spend by tag on the Overview equal to the
 * rows, a token's tags and limits edited on Tokens (and then applied by the proxy), tag budgets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { formatUsd } from '../../lambda/dashboard/src/format';
import { callProxy } from '../reliability/support/requests';
import { csvRows } from '../support/csv';
import { EVENTUALLY_MS } from '../support/patience';
import type { Account } from '../support/proxy-server';
import { describeInBrowser, SCREENSHOT_DIR, newTab, openPage, overflowsHorizontally, proxyAndBrowser, screenshot, signIn, VIEWPORTS, type ViewportName } from './browser-harness';

interface Row {
  id: string;
  tags?: Record<string, string>;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  saved_nanos?: number;
}

interface TokenJson {
  token_id: string;
  tags: Record<string, string>;
  limits: { requests_per_minute: number | null; models: string[] | null };
}

const SIZES = Object.keys(VIEWPORTS) as ViewportName[];

describeInBrowser('tags and per-token controls in the dashboard', () => {
  const world = proxyAndBrowser();

  async function rows(account: Account, query = ''): Promise<Row[]> {
    const response = await world.proxy.api(`/api/logs?limit=500${query ? `&${query}` : ''}`, { token: account.token });
    expect(response.status).toBe(200);
    return ((await response.json()) as { items: Row[] }).items;
  }

  async function tokenJson(account: Account, tokenId: string): Promise<TokenJson> {
    const body = (await (await world.proxy.api('/api/tokens', { token: account.token })).json()) as { tokens: TokenJson[] };
    return body.tokens.find((t) => t.token_id === tokenId)!;
  }

  async function createAppToken(account: Account, name: string): Promise<{ token: string; tokenId: string }> {
    const response = await world.proxy.api('/api/tokens', { token: account.token, body: { name } });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { token: string; token_id: string };
    world.proxy.secrets.add(body.token);
    return { token: body.token, tokenId: body.token_id };
  }

  /** An account with tagged traffic: two team=search requests (one a cache hit, so with savings), one team=ads, one untagged. */
  async function taggedAccount(name: string): Promise<Account> {
    const account = await world.proxy.createAccount(name);
    await world.proxy.saveKey(account.token, 'prov-b');
    const send = async (tags: string | undefined, extra: Record<string, string> = {}, prompt?: string) => {
      const answer = await callProxy(world.proxy, { provider: 'prov-b', token: account.token, prompt, headers: { ...(tags ? { 'x-proxy-tags': tags } : {}), ...extra } });
      expect(answer.status).toBe(200);
      return answer;
    };
    await send('team=search, feature=autocomplete', { 'x-proxy-cache': 'true' }, 'cached question');
    expect((await send('team=search, feature=autocomplete', { 'x-proxy-cache': 'true' }, 'cached question')).headers.get('x-proxy-cache')).toBe('HIT');
    await send('team=search, feature=summary');
    await send('team=ads');
    await send(undefined);
    await world.proxy.waitForRows(account.token, 5);
    // Spend by tag comes from the rollups, folded from the rows just after them.
    const deadline = Date.now() + EVENTUALLY_MS;
    for (;;) {
      const stats = (await (await world.proxy.api('/api/stats', { token: account.token })).json()) as { by_tag: Record<string, Record<string, { requests: number }>> };
      if (stats.by_tag.team?.search?.requests === 3 && stats.by_tag.team.ads?.requests === 1) break;
      if (Date.now() > deadline) throw new Error(`by_tag never reached the rows: ${JSON.stringify(stats.by_tag)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return account;
  }

  const shownIds = (page: Page) => page.locator('[data-testid=log-row]').evaluateAll((els) => els.map((el) => el.getAttribute('data-id')).sort());
  const logsReady = (page: Page) => page.locator('[data-testid=page-logs][data-state=ready]').waitFor();

  /** Waits until the list shows exactly these rows (a page that was ready before a navigation may not have started loading yet). */
  async function waitForShown(page: Page, expected: Row[]): Promise<void> {
    const ids = expected.map((r) => r.id).sort();
    await page
      .waitForFunction(
        (want) => {
          if (!document.querySelector('[data-testid=page-logs][data-state=ready]')) return false;
          const shown = [...document.querySelectorAll('[data-testid=log-row]')].map((el) => el.getAttribute('data-id')).sort();
          return JSON.stringify(shown) === JSON.stringify(want);
        },
        ids,
        { timeout: 15_000 },
      )
      .catch(async () => {
        // Say what is on screen instead of only "timeout".
        expect(await shownIds(page)).toEqual(ids);
      });
  }

  async function openFilters(page: Page, size: ViewportName): Promise<void> {
    // On a phone the filters fold behind a toggle.
    if (size === 'phone' && (await page.getByTestId('logs-filters-toggle').getAttribute('aria-expanded')) !== 'true') await page.getByTestId('logs-filters-toggle').click();
  }

  async function addTagFilter(page: Page, size: ViewportName, tag: string): Promise<void> {
    await openFilters(page, size);
    await page.getByTestId('logs-filter-tag').fill(tag);
    await page.getByTestId('logs-filter-tag').press('Enter');
    await page.locator(`[data-testid=logs-filter-tag-chip][data-tag="${tag}"]`).waitFor();
    await page.getByTestId('logs-apply').click();
    await logsReady(page);
  }

  test.each(SIZES)('the Logs tag filter narrows the rows, stays in the URL through reload and back, and a request shows its tags (%s)', async (size) => {
    const account = await taggedAccount(`tags-logs-${size}`);
    const all = await rows(account);
    const search = await rows(account, 'tag=team%3Dsearch');
    const searchAutocomplete = await rows(account, 'tag=team%3Dsearch&tag=feature%3Dautocomplete');
    expect([all.length, search.length, searchAutocomplete.length]).toEqual([5, 3, 2]);

    const { context, page } = await newTab(world.browser, size);
    try {
      await signIn(page, world.proxy.url, account.token);
      await openPage(page, 'logs');
      await waitForShown(page, all);

      await addTagFilter(page, size, 'team=search');
      await waitForShown(page, search);
      expect(new URL(page.url()).hash).toBe('#/logs?tag=team%3Dsearch');

      // A second tag: a row must carry both.
      await addTagFilter(page, size, 'feature=autocomplete');
      await waitForShown(page, searchAutocomplete);
      expect(new URL(page.url()).hash).toBe('#/logs?tag=team%3Dsearch&tag=feature%3Dautocomplete');
      if (size === 'phone') await expect(page.getByTestId('logs-filters-toggle').textContent()).resolves.toContain('2 active');
      await screenshot(page, `tags-logs-filtered-${size}`);
      expect(await overflowsHorizontally(page)).toBe(false);

      // Download CSV exports the same rows, with their tags.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('logs-csv').click()]);
      const [header, ...lines] = csvRows(readFileSync((await download.path())!, 'utf8'));
      const exported = lines.map((line) => Object.fromEntries(header!.map((name, i) => [name, line[i]])));
      expect(exported.map((r) => r.id).sort()).toEqual(searchAutocomplete.map((r) => r.id).sort());
      expect(new Set(exported.map((r) => r.tags))).toEqual(new Set(['feature=autocomplete,team=search']));

      await page.reload();
      await logsReady(page);
      await waitForShown(page, searchAutocomplete);
      await openFilters(page, size);
      await expect(page.locator('[data-testid=logs-filter-tag-chip]').evaluateAll((els) => els.map((el) => el.getAttribute('data-tag')))).resolves.toEqual([
        'team=search',
        'feature=autocomplete',
      ]);
      await screenshot(page, `tags-logs-filters-open-${size}`);
      expect(await overflowsHorizontally(page)).toBe(false);

      await page.goBack();
      await logsReady(page);
      await waitForShown(page, search);

      // The detail panel lists the row's tags.
      const tagged = searchAutocomplete[0]!;
      await page.locator(`[data-testid=log-row][data-id="${tagged.id}"]`).click();
      await page.locator('[data-testid=log-detail][data-state=ready]').waitFor();
      await expect(page.locator('[data-testid=log-detail-tag]').evaluateAll((els) => els.map((el) => el.getAttribute('data-tag')))).resolves.toEqual([
        'feature=autocomplete',
        'team=search',
      ]);
      await screenshot(page, `tags-log-detail-${size}`, { fullPage: false });
      expect(await overflowsHorizontally(page)).toBe(false);
      // A tag in the details opens the logs that carry it.
      await page.locator('[data-testid=log-detail-tag][data-tag="feature=autocomplete"] a').click();
      await page.locator('[data-testid=log-detail]').waitFor({ state: 'detached' });
      await logsReady(page);
      await waitForShown(page, searchAutocomplete);

      // A malformed tag is refused by the API, whose message is shown.
      await openFilters(page, size);
      await page.getByTestId('logs-clear').click();
      await logsReady(page);
      await openFilters(page, size);
      await page.getByTestId('logs-filter-tag').fill('Team=search');
      await page.getByTestId('logs-apply').click();
      await page.locator('[data-testid=page-logs][data-state=error]').waitFor();
      await expect(page.getByTestId('logs-error').textContent()).resolves.toContain('tag key "Team" must be 1 to 40 lowercase letters');
      // A field without key=value is caught before it is sent.
      await openFilters(page, size);
      await page.getByTestId('logs-filter-tag').fill('team');
      await page.getByTestId('logs-filter-tag-add').click();
      await expect(page.getByTestId('logs-filter-tag-error').textContent()).resolves.toBe('Write a tag as key=value, for example team=search.');
    } finally {
      await context.close();
    }
  });

  test.each(SIZES)('Spend by tag on the Overview equals the rows, per value of the chosen key (%s)', async (size) => {
    const account = await taggedAccount(`tags-overview-${size}`);
    const { context, page } = await newTab(world.browser, size);
    try {
      await signIn(page, world.proxy.url, account.token);
      const card = page.getByTestId('spend-by-tag');
      await card.getByTestId('spend-by-tag-row').first().waitFor();
      // Keys in alphabetical order: "feature" first.
      await expect(card.getByTestId('spend-by-tag-key').inputValue()).resolves.toBe('feature');
      await card.getByTestId('spend-by-tag-key').selectOption('team');
      await card.locator('[data-testid=spend-by-tag-row][data-value=ads]').waitFor();

      for (const value of ['search', 'ads']) {
        const expected = await rows(account, `tag=team%3D${value}`);
        const row = card.locator(`[data-testid=spend-by-tag-row][data-value="${value}"]`);
        const figures = await row.evaluate((el) => ({
          requests: Number(el.getAttribute('data-requests')),
          input: Number(el.getAttribute('data-input-tokens')),
          output: Number(el.getAttribute('data-output-tokens')),
          cost: Number(el.getAttribute('data-cost-nanos')),
          saved: Number(el.getAttribute('data-saved-nanos')),
        }));
        const sum = (pick: (r: Row) => number) => expected.reduce((total, r) => total + pick(r), 0);
        expect(figures).toEqual({
          requests: expected.length,
          input: sum((r) => r.input_tokens),
          output: sum((r) => r.output_tokens),
          cost: sum((r) => r.cost_nanos),
          saved: sum((r) => r.saved_nanos ?? 0),
        });
        // What is on screen: null for a hidden cell.
        const cells = await row.locator('td').evaluateAll((tds) => tds.map((td) => (td.checkVisibility() ? (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim() : null)));
        expect(cells[0]).toBe(value);
        // On a phone the tokens go under the requests, in place of their own column.
        if (size === 'laptop') expect(cells.slice(1, 3)).toEqual([String(expected.length), `${figures.input} / ${figures.output}`]);
        else expect(cells.slice(1, 3)).toEqual([`${expected.length} ${figures.input} in / ${figures.output} out`, null]);
        expect(cells[3]!.startsWith(formatUsd(figures.cost / 1e9))).toBe(true);
      }
      // The cache hit of team=search saved money; ads saved none.
      await expect(card.locator('[data-testid=spend-by-tag-row][data-value=search]').getAttribute('data-saved-nanos')).resolves.not.toBe('0');
      await expect(card.locator('[data-testid=spend-by-tag-row][data-value=search]').getByTestId('spend-by-tag-saved').textContent()).resolves.toMatch(/^saved \$0\.0000\d+$/);
      await expect(card.locator('[data-testid=spend-by-tag-row][data-value=ads]').getByTestId('spend-by-tag-saved').count()).resolves.toBe(0);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `tags-overview-${size}`);
      await card.screenshot({ path: join(SCREENSHOT_DIR, `tags-overview-card-${size}.png`) });
      expect(await overflowsHorizontally(page)).toBe(false);

      // A value links to its logs.
      await card.locator('[data-testid=spend-by-tag-row][data-value=ads] a').click();
      await logsReady(page);
      await waitForShown(page, await rows(account, 'tag=team%3Dads'));
    } finally {
      await context.close();
    }
  });

  test.each(SIZES)("a token's tags and limits are edited on Tokens, shown by the API, and applied by the proxy (%s)", async (size) => {
    const account = await world.proxy.createAccount(`tags-tokens-${size}`);
    await world.proxy.saveKey(account.token, 'prov-b');
    const tagged = await createAppToken(account, 'search-app');
    const limited = await createAppToken(account, 'limited-app');
    const { context, page } = await newTab(world.browser, size);
    try {
      await signIn(page, world.proxy.url, account.token);
      await openPage(page, 'tokens');
      const row = (tokenId: string) => page.locator(`[data-testid=token-row][data-token-id="${tokenId}"]`);

      // Tags: the server's strict message is shown; then valid tags are saved.
      const first = row(tagged.tokenId);
      await expect(first.getByTestId('token-tags-none').textContent()).resolves.toBe('No tags');
      await first.getByTestId('token-settings-edit').click();
      await first.getByTestId('token-settings-tags').fill('Team=search');
      await first.getByTestId('token-settings-save').click();
      await expect(first.getByTestId('token-settings-error').textContent()).resolves.toContain('tags: tag key "Team" must be 1 to 40 lowercase letters');
      await first.getByTestId('token-settings-tags').fill('team=search, team=ads');
      await first.getByTestId('token-settings-save').click();
      await expect(first.getByTestId('token-settings-error').textContent()).resolves.toContain('Tag “team” is given twice');
      await first.getByTestId('token-settings-tags').fill('team=search, cost-center=r&d');
      await screenshot(page, `tags-token-editing-${size}`);
      expect(await overflowsHorizontally(page)).toBe(false);
      await first.getByTestId('token-settings-save').click();
      await first.locator('[data-testid=token-tag][data-tag="team=search"]').waitFor();
      expect(await tokenJson(account, tagged.tokenId)).toMatchObject({ tags: { team: 'search', 'cost-center': 'r&d' }, limits: { requests_per_minute: null, models: null } });

      // The proxy adds them to the token's rows and refuses a request that would override one.
      const ok = await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token, headers: { 'x-proxy-tags': 'feature=autocomplete' } });
      expect(ok.status).toBe(200);
      const [tokenRow] = await world.proxy.rowsFor(account.token, [ok.requestId]);
      expect(tokenRow!.tags).toEqual({ team: 'search', 'cost-center': 'r&d', feature: 'autocomplete' });
      const overriding = await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token, headers: { 'x-proxy-tags': 'team=ads' } });
      expect(overriding.status).toBe(400);
      expect(overriding.text).toContain('tag \\"team\\" is set by this proxy token');

      // Limits: bad values are named by the server; then a rate of 2 a minute and, on the other token, a model list.
      const second = row(limited.tokenId);
      await second.getByTestId('token-settings-edit').click();
      await second.getByTestId('token-settings-rate').fill('0');
      await second.getByTestId('token-settings-save').click();
      await expect(second.getByTestId('token-settings-error').textContent()).resolves.toContain('requests_per_minute must be an integer from 1 to 10,000');
      await second.getByTestId('token-settings-rate').fill('fast');
      await second.getByTestId('token-settings-save').click();
      await expect(second.getByTestId('token-settings-error').textContent()).resolves.toContain('requests_per_minute must be an integer from 1 to 10,000');
      await second.getByTestId('token-settings-rate').fill('2');
      await second.getByTestId('token-settings-save').click();
      await second.locator('[data-testid=token-limit-rate][data-value="2"]').waitFor();
      await expect(second.getByTestId('token-limit-rate').textContent()).resolves.toBe('2 requests a minute');
      expect((await tokenJson(account, limited.tokenId)).limits).toEqual({ requests_per_minute: 2, models: null });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await callProxy(world.proxy, { provider: 'prov-b', token: limited.token })).status);
      expect(statuses).toEqual([200, 200, 429]);
      // A blank rate is the default again.
      await second.getByTestId('token-settings-edit').click();
      await expect(second.getByTestId('token-settings-rate').inputValue()).resolves.toBe('2');
      await second.getByTestId('token-settings-rate').fill('');
      await second.getByTestId('token-settings-save').click();
      await second.locator('[data-testid=token-limit-rate][data-value=""]').waitFor();
      expect((await tokenJson(account, limited.tokenId)).limits).toEqual({ requests_per_minute: null, models: null });

      await first.getByTestId('token-settings-edit').click();
      await expect(first.getByTestId('token-settings-tags').inputValue()).resolves.toBe('cost-center=r&d, team=search');
      await first.getByTestId('token-settings-models').fill('claude-haiku-, gpt-4.1-mini');
      await first.getByTestId('token-settings-save').click();
      await first.locator('[data-testid=token-limit-models][data-value="claude-haiku-,gpt-4.1-mini"]').waitFor();
      expect(await tokenJson(account, tagged.tokenId)).toMatchObject({ tags: { team: 'search', 'cost-center': 'r&d' }, limits: { requests_per_minute: null, models: ['claude-haiku-', 'gpt-4.1-mini'] } });
      const upstream = world.proxy.fakes.fakes['prov-b'].requests.length;
      const refused = await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token });
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('model_not_allowed');
      expect(world.proxy.fakes.fakes['prov-b'].requests.length).toBe(upstream);

      // After a reload the page shows what the API holds.
      await page.reload();
      await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
      await expect(row(limited.tokenId).getByTestId('token-limit-rate').textContent()).resolves.toBe('Default rate limit');
      await expect(row(tagged.tokenId).getByTestId('token-limit-models').textContent()).resolves.toBe('Models: claude-haiku-, gpt-4.1-mini');
      await row(tagged.tokenId).scrollIntoViewIfNeeded();
      await screenshot(page, `tags-tokens-${size}`);
      await page.getByTestId('tokens-table').screenshot({ path: join(SCREENSHOT_DIR, `tags-tokens-table-${size}.png`) });
      expect(await overflowsHorizontally(page)).toBe(false);

      // Clearing the fields lifts the limits.
      await row(tagged.tokenId).getByTestId('token-settings-edit').click();
      await row(tagged.tokenId).getByTestId('token-settings-models').fill('');
      await row(tagged.tokenId).getByTestId('token-settings-save').click();
      await row(tagged.tokenId).locator('[data-testid=token-limit-models][data-value=""]').waitFor();
      expect((await tokenJson(account, tagged.tokenId)).limits).toEqual({ requests_per_minute: null, models: null });
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token })).status).toBe(200);
    } finally {
      await context.close();
    }
  });

  test.each(SIZES)('a tag budget is added on Tokens and the proxy refuses that tag once it is spent (%s)', async (size) => {
    const account = await world.proxy.createAccount(`tags-budget-${size}`);
    await world.proxy.saveKey(account.token, 'prov-b');
    const { context, page } = await newTab(world.browser, size);
    try {
      await signIn(page, world.proxy.url, account.token);
      await openPage(page, 'tokens');
      const section = page.getByTestId('tag-budgets');
      await section.getByTestId('tag-budgets-empty').waitFor();
      await section.getByTestId('tag-budget-new-tag').fill('Team=search');
      await section.getByTestId('tag-budget-new-limit').fill('0.000001');
      await section.getByTestId('tag-budget-new-period').selectOption('day');
      await section.getByTestId('tag-budget-new-save').click();
      await expect(section.getByTestId('tag-budget-new-error').textContent()).resolves.toContain('tag key "Team"');
      await section.getByTestId('tag-budget-new-tag').fill('team=search');
      await section.getByTestId('tag-budget-new-save').click();
      await section.locator('[data-testid=tag-budget-row][data-tag="team=search"]').waitFor();
      const listed = (await (await world.proxy.api('/api/budgets', { token: account.token })).json()) as { tags: unknown[] };
      expect(listed.tags).toEqual([expect.objectContaining({ key: 'team', value: 'search', limit_usd: 0.000001, period: 'day' })]);

      const call = () => callProxy(world.proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-tags': 'team=search' } });
      expect((await call()).status).toBe(200);
      const deadline = Date.now() + EVENTUALLY_MS;
      for (;;) {
        const body = (await (await world.proxy.api('/api/budgets', { token: account.token })).json()) as { tags: Array<{ spent_usd: number }> };
        if (body.tags[0]!.spent_usd >= 0.000001) break;
        if (Date.now() > deadline) throw new Error('the tag budget never counted the request');
        await new Promise((r) => setTimeout(r, 50));
      }
      const refused = await call();
      expect(refused.status).toBe(402);
      expect(refused.text).toContain('tag team=search');
      expect((await callProxy(world.proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-tags': 'team=ads' } })).status).toBe(200);

      await page.reload();
      await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
      await expect(section.getByTestId('tag-budget-bar').getAttribute('data-level')).resolves.toBe('over');
      await section.scrollIntoViewIfNeeded();
      await screenshot(page, `tags-budgets-${size}`);
      await section.screenshot({ path: join(SCREENSHOT_DIR, `tags-budgets-section-${size}.png`) });
      expect(await overflowsHorizontally(page)).toBe(false);

      await section.getByTestId('tag-budget-remove').click();
      await section.getByTestId('tag-budget-remove-confirm').click();
      await section.getByTestId('tag-budgets-empty').waitFor();
      expect((await call()).status).toBe(200);
    } finally {
      await context.close();
    }
  });
});
