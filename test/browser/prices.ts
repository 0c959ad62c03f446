/**
 * Model prices and estimates in the browser: the account's own prices set, refused and removed in
 * their card on the Tokens page, checked against the API and the proxy under a budget; a cut-off
 * stream's row marked as an estimate in the logs table, and the Overview's cost saying how much
 * of it is estimated.
 */
import OpenAI from 'openai';
import { formatUsd } from '../../lambda/dashboard/src/format';
import { openPage, screenshot, type BrowserWorld, openSignedIn } from './browser-harness';
import { leaveStreamEarly } from '../support/cut-off-stream';

const FINE_TUNED = 'ft:gpt-4o:acme::ui123';
const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };

export const pricesTests = (world: BrowserWorld) =>
  describe('model prices and estimates in the dashboard', () => {
    const openai = (token: string) =>
      new OpenAI({ baseURL: `${world.proxy.proxyBase}/prov-b/v1`, apiKey: token, maxRetries: 0 });

    test('a model price is set, refused with the field named, used under a budget, and removed', async () => {
      const account = await world.proxy.createAccount('prices-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      const budget = await world.proxy.api(`/api/tokens/${account.tokenId}/budget`, {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 10, period: 'month' },
      });
      expect(budget.status).toBe(200);
      const page = await openSignedIn(world, account.token, 'tokens');
      const card = page.getByTestId('model-prices');
      await card.getByTestId('prices-empty').waitFor();

      // Priced as a model the price list doesn't know: the server's refusal, next to the form.
      await card.getByTestId('price-new-model').fill('ft:gpt-4o:acme:*');
      await card.getByTestId('price-new-way').selectOption('as');
      await card.getByTestId('price-new-as').fill('no-such-model-anywhere');
      await card.getByTestId('price-new-save').click();
      await expect(card.getByTestId('price-new-error').textContent()).resolves.toContain('priced_as');

      await card.getByTestId('price-new-way').selectOption('tokens');
      await card.getByTestId('price-new-input').fill('2');
      await card.getByTestId('price-new-output').fill('6');
      await card.getByTestId('price-new-save').click();
      const row = card.locator('[data-testid=price-row][data-model="ft:gpt-4o:acme:*"]');
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain('input $2 · output $6 per 1M tokens');
      await screenshot(page, 'prices-card');
      const listed = (await (await world.proxy.api('/api/prices', { token: account.token })).json()) as {
        prices: unknown[];
      };
      expect(listed.prices).toEqual([expect.objectContaining({ model: 'ft:gpt-4o:acme:*', input: 2, output: 6 })]);

      // The budget no longer refuses the fine-tuned model: it is charged at the account's price.
      world.proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
      const answer = await openai(account.token)
        .chat.completions.create({ model: FINE_TUNED, messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      const [charged] = await world.proxy.rowsFor(account.token, [answer.response.headers.get('x-proxy-request-id')!]);
      expect(charged).toMatchObject({ status_code: 200, price_source: 'custom', cost_nanos: 5_000_000 });

      await row.getByTestId('price-remove').click();
      await row.getByTestId('price-remove-confirm').click();
      await card.getByTestId('prices-empty').waitFor();
      const after = (await (await world.proxy.api('/api/prices', { token: account.token })).json()) as {
        prices: unknown[];
      };
      expect(after.prices).toEqual([]);
    });

    test('a cut-off stream is marked as an estimate in the logs and in the Overview cost', async () => {
      const account = await world.proxy.createAccount('estimates-ui');
      await world.proxy.saveKey(account.token, 'prov-b');
      world.proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
      await openai(account.token).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
      await leaveStreamEarly(world.proxy.fakes.fakes['prov-b'], openai(account.token), USAGE);
      const rows = await world.proxy.waitForRows(account.token, 2);
      const estimated = rows.find((r) => r.usage_estimated === true)!;
      expect(estimated).toBeDefined();

      const page = await openSignedIn(world, account.token, 'logs');
      const marked = page.locator(`[data-testid=log-row][data-id="${estimated.id as string}"]`);
      await marked.getByTestId('badge-estimated').waitFor();
      await expect(page.getByTestId('badge-estimated').count()).resolves.toBe(1);
      await screenshot(page, 'logs-estimated');

      await openPage(page, 'overview');
      const note = page.getByTestId('card-cost').getByTestId('cost-estimated');
      await note.waitFor();
      const usd = formatUsd((estimated.cost_nanos as number) / 1e9);
      await expect(note.textContent()).resolves.toBe(`${usd} of it estimated (1 cut-off stream)`);
      await screenshot(page, 'overview-estimated');
    });
  });
