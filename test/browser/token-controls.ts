/**
 * Per-token controls in the browser (docs/tags.md), at laptop and phone widths: a token's tags and
 * limits edited on Tokens (and then applied by the proxy), and tag budgets.
 */
import { callProxy } from '../reliability/support/requests';
import { eventually } from '../support/patience';
import {
  overflowsHorizontally,
  screenshot,
  VIEWPORTS,
  type ViewportName,
  type BrowserWorld,
  openSignedIn,
} from './browser-harness';
import type { Account, ProxyServer } from '../support/proxy-server';

interface TokenJson {
  token_id: string;
  tags: Record<string, string>;
  limits: { requests_per_minute: number | null; models: string[] | null };
}

async function tokenJson(proxy: ProxyServer, account: Account, tokenId: string): Promise<TokenJson> {
  const body = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as { tokens: TokenJson[] };
  return body.tokens.find((t) => t.token_id === tokenId)!;
}

async function createAppToken(
  proxy: ProxyServer,
  account: Account,
  name: string,
): Promise<{ token: string; tokenId: string }> {
  const response = await proxy.api('/api/tokens', { token: account.token, body: { name } });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { token: string; token_id: string };
  proxy.secrets.add(body.token);
  return { token: body.token, tokenId: body.token_id };
}

const SIZES = Object.keys(VIEWPORTS) as ViewportName[];

export const tokenControlsTests = (world: BrowserWorld) =>
  describe("a token's tags, limits and tag budgets in the dashboard", () => {
    test.each(SIZES)(
      "a token's tags and limits are edited on Tokens, shown by the API, and applied by the proxy (%s)",
      async (size) => {
        const account = await world.proxy.createAccount(`tags-tokens-${size}`);
        await world.proxy.saveKey(account.token, 'prov-b');
        const tagged = await createAppToken(world.proxy, account, 'search-app');
        const limited = await createAppToken(world.proxy, account, 'limited-app');
        const page = await openSignedIn(world, account.token, 'tokens', { size });
        const row = (tokenId: string) => page.locator(`[data-testid=token-row][data-token-id="${tokenId}"]`);

        // Tags: the server's strict message is shown; then valid tags are saved.
        const first = row(tagged.tokenId);
        await expect(first.getByTestId('token-tags-none').textContent()).resolves.toBe('No tags');
        await first.getByTestId('token-settings-edit').click();
        await first.getByTestId('token-settings-tags').fill('Team=search');
        await first.getByTestId('token-settings-save').click();
        await expect(first.getByTestId('token-settings-error').textContent()).resolves.toContain(
          'tags: tag key "Team" must be 1 to 40 lowercase letters',
        );
        await first.getByTestId('token-settings-tags').fill('team=search, team=ads');
        await first.getByTestId('token-settings-save').click();
        await expect(first.getByTestId('token-settings-error').textContent()).resolves.toContain(
          'Tag “team” is given twice',
        );
        await first.getByTestId('token-settings-tags').fill('team=search, cost-center=r&d');
        await screenshot(page, `tags-token-editing-${size}`);
        expect(await overflowsHorizontally(page)).toBe(false);
        await first.getByTestId('token-settings-save').click();
        await first.locator('[data-testid=token-tag][data-tag="team=search"]').waitFor();
        expect(await tokenJson(world.proxy, account, tagged.tokenId)).toMatchObject({
          tags: { team: 'search', 'cost-center': 'r&d' },
          limits: { requests_per_minute: null, models: null },
        });

        // The proxy adds them to the token's rows and refuses a request that would override one.
        const ok = await callProxy(world.proxy, {
          provider: 'prov-b',
          token: tagged.token,
          headers: { 'x-proxy-tags': 'feature=autocomplete' },
        });
        expect(ok.status).toBe(200);
        const [tokenRow] = await world.proxy.rowsFor(account.token, [ok.requestId]);
        expect(tokenRow!.tags).toEqual({ team: 'search', 'cost-center': 'r&d', feature: 'autocomplete' });
        const overriding = await callProxy(world.proxy, {
          provider: 'prov-b',
          token: tagged.token,
          headers: { 'x-proxy-tags': 'team=ads' },
        });
        expect(overriding.status).toBe(400);
        expect(overriding.text).toContain('tag \\"team\\" is set by this proxy token');

        // Limits: bad values are named by the server; then a rate of 2 a minute and, on the other token, a model list.
        const second = row(limited.tokenId);
        await second.getByTestId('token-settings-edit').click();
        await second.getByTestId('token-settings-rate').fill('0');
        await second.getByTestId('token-settings-save').click();
        await expect(second.getByTestId('token-settings-error').textContent()).resolves.toContain(
          'requests_per_minute must be an integer from 1 to 120,000',
        );
        await second.getByTestId('token-settings-rate').fill('fast');
        await second.getByTestId('token-settings-save').click();
        await expect(second.getByTestId('token-settings-error').textContent()).resolves.toContain(
          'requests_per_minute must be an integer from 1 to 120,000',
        );
        await second.getByTestId('token-settings-rate').fill('2');
        await second.getByTestId('token-settings-save').click();
        await second.locator('[data-testid=token-limit-rate][data-value="2"]').waitFor();
        await expect(second.getByTestId('token-limit-rate').textContent()).resolves.toBe('2 requests a minute');
        expect((await tokenJson(world.proxy, account, limited.tokenId)).limits).toEqual({
          requests_per_minute: 2,
          models: null,
        });
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++)
          statuses.push((await callProxy(world.proxy, { provider: 'prov-b', token: limited.token })).status);
        expect(statuses).toEqual([200, 200, 429]);
        // A blank rate is the default again.
        await second.getByTestId('token-settings-edit').click();
        await expect(second.getByTestId('token-settings-rate').inputValue()).resolves.toBe('2');
        await second.getByTestId('token-settings-rate').fill('');
        await second.getByTestId('token-settings-save').click();
        await second.locator('[data-testid=token-limit-rate][data-value=""]').waitFor();
        expect((await tokenJson(world.proxy, account, limited.tokenId)).limits).toEqual({
          requests_per_minute: null,
          models: null,
        });

        await first.getByTestId('token-settings-edit').click();
        await expect(first.getByTestId('token-settings-tags').inputValue()).resolves.toBe(
          'cost-center=r&d, team=search',
        );
        await first.getByTestId('token-settings-models').fill('claude-haiku-, gpt-4.1-mini');
        await first.getByTestId('token-settings-save').click();
        await first.locator('[data-testid=token-limit-models][data-value="claude-haiku-,gpt-4.1-mini"]').waitFor();
        expect(await tokenJson(world.proxy, account, tagged.tokenId)).toMatchObject({
          tags: { team: 'search', 'cost-center': 'r&d' },
          limits: { requests_per_minute: null, models: ['claude-haiku-', 'gpt-4.1-mini'] },
        });
        const upstream = world.proxy.fakes.fakes['prov-b'].requests.length;
        const refused = await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token });
        expect(refused.status).toBe(403);
        expect(refused.text).toContain('model_not_allowed');
        expect(world.proxy.fakes.fakes['prov-b'].requests.length).toBe(upstream);

        // After a reload the page shows what the API holds.
        await page.reload();
        await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
        await expect(row(limited.tokenId).getByTestId('token-limit-rate').textContent()).resolves.toBe(
          'Default rate limit',
        );
        await expect(row(tagged.tokenId).getByTestId('token-limit-models').textContent()).resolves.toBe(
          'Models: claude-haiku-, gpt-4.1-mini',
        );
        await row(tagged.tokenId).scrollIntoViewIfNeeded();
        await screenshot(page, `tags-tokens-${size}`);
        await screenshot(page.getByTestId('tokens-table'), `tags-tokens-table-${size}`);
        expect(await overflowsHorizontally(page)).toBe(false);

        // Clearing the fields lifts the limits.
        await row(tagged.tokenId).getByTestId('token-settings-edit').click();
        await row(tagged.tokenId).getByTestId('token-settings-models').fill('');
        await row(tagged.tokenId).getByTestId('token-settings-save').click();
        await row(tagged.tokenId).locator('[data-testid=token-limit-models][data-value=""]').waitFor();
        expect((await tokenJson(world.proxy, account, tagged.tokenId)).limits).toEqual({
          requests_per_minute: null,
          models: null,
        });
        expect((await callProxy(world.proxy, { provider: 'prov-b', token: tagged.token })).status).toBe(200);
      },
    );

    test.each(SIZES)(
      'a tag budget is added on Tokens and the proxy refuses that tag once it is spent (%s)',
      async (size) => {
        const account = await world.proxy.createAccount(`tags-budget-${size}`);
        await world.proxy.saveKey(account.token, 'prov-b');
        const page = await openSignedIn(world, account.token, 'tokens', { size });
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
        const listed = (await (await world.proxy.api('/api/budgets', { token: account.token })).json()) as {
          tags: unknown[];
        };
        expect(listed.tags).toEqual([
          expect.objectContaining({ key: 'team', value: 'search', limit_usd: 0.000001, period: 'day' }),
        ]);

        const call = () =>
          callProxy(world.proxy, {
            provider: 'prov-b',
            token: account.token,
            headers: { 'x-proxy-tags': 'team=search' },
          });
        expect((await call()).status).toBe(200);
        const counted = await eventually(async () => {
          const body = (await (await world.proxy.api('/api/budgets', { token: account.token })).json()) as {
            tags: Array<{ spent_usd: number }>;
          };
          return body.tags[0]!.spent_usd >= 0.000001 ? true : undefined;
        });
        if (!counted) throw new Error('the tag budget never counted the request');
        const refused = await call();
        expect(refused.status).toBe(402);
        expect(refused.text).toContain('tag team=search');
        expect(
          (
            await callProxy(world.proxy, {
              provider: 'prov-b',
              token: account.token,
              headers: { 'x-proxy-tags': 'team=ads' },
            })
          ).status,
        ).toBe(200);

        await page.reload();
        await page.locator('[data-testid=page-tokens][data-state=ready]').waitFor();
        await expect(section.getByTestId('tag-budget-bar').getAttribute('data-level')).resolves.toBe('over');
        await section.scrollIntoViewIfNeeded();
        await screenshot(page, `tags-budgets-${size}`);
        await screenshot(section, `tags-budgets-section-${size}`);
        expect(await overflowsHorizontally(page)).toBe(false);

        await section.getByTestId('tag-budget-remove').click();
        await section.getByTestId('tag-budget-remove-confirm').click();
        await section.getByTestId('tag-budgets-empty').waitFor();
        expect((await call()).status).toBe(200);
      },
    );
  });
