/**
 * Amazon Bedrock on the dashboard, in headless Chromium against the real local server after real
 * Bedrock requests through the AWS SDK (docs/bedrock.md): the Integrations page's Bedrock card (signed
 * with the machine's AWS credentials, or saying none were found; a saved Bedrock API key used
 * instead), and Bedrock's rows on the Overview and Logs pages with their model, tokens and cost,
 * at laptop and phone widths.
 */
import {
  AccessDeniedException,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { randomBytes } from 'node:crypto';
import { formatInt, formatUsd } from '../../lambda/dashboard/src/format';
import type { LogRow, Stats } from '../../lambda/dashboard/src/types';
import { DEFAULT_BEDROCK_USAGE as U } from '../fakes/fake-bedrock';
import { BEDROCK_COST_NANOS, BEDROCK_MODEL as MODEL, bedrockClient } from '../support/bedrock';
import type { Account } from '../support/proxy-server';
import {
  openPage,
  overflowsHorizontally,
  screenshot,
  type BrowserWorld,
  type ViewportName,
  openSignedIn,
  signedInTab,
  loadRoute,
} from './browser-harness';

const USER = 'bedrock-team';
const messages = [{ role: 'user' as const, content: [{ text: 'Hello from the dashboard test' }] }];

/** On a server that signs Bedrock requests with the machine's AWS credentials (the fakes' own). */
export const bedrockTests = (world: BrowserWorld) =>
  describe('Amazon Bedrock on the dashboard', () => {
    let account: Account;

    beforeAll(async () => {
      const { proxy } = world;
      account = await proxy.createAccount('bedrock');
      const bedrock = bedrockClient(proxy.proxyBase, account.token, { 'x-proxy-user': USER });
      await bedrock.send(new ConverseCommand({ modelId: MODEL, messages }));
      const stream = await bedrock.send(new ConverseStreamCommand({ modelId: MODEL, messages }));
      for await (const _event of stream.stream!);
      const body = JSON.stringify({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      await bedrock.send(new InvokeModelCommand({ modelId: MODEL, body }));
      await proxy.waitForRows(account.token, 3);
    });

    test.each<ViewportName>(['laptop', 'phone'])(
      "Integrations (%s): the Bedrock card says the machine's AWS credentials sign requests, and a saved Bedrock API key is used instead",
      async (size) => {
        const page = await openSignedIn(world, account.token, 'integrations', { size });
        const card = page.getByTestId('key-card-bedrock');
        await expect(card.locator('h2').textContent()).resolves.toBe('Amazon Bedrock');
        await expect(page.getByTestId('key-badge-bedrock').textContent()).resolves.toBe(
          'Signed by local AWS credentials',
        );
        await expect(page.getByTestId('key-status-bedrock').textContent()).resolves.toBe(
          "No key saved: the proxy signs Amazon Bedrock requests with this machine's AWS credentials (the AWS SDK's credential chain: AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws). A key saved here is used instead.",
        );
        await page.getByTestId('snippets-bedrock').click();
        const stored = page.getByTestId('snippet-stored-bedrock');
        await expect(stored.textContent()).resolves.toContain(
          'The proxy signs with its own AWS credentials (in AWS, its role), or adds your saved Amazon Bedrock key. Your code only holds a proxy token.',
        );
        const code = await stored.locator('pre').textContent();
        expect(code).toContain(`endpoint: "${world.proxy.url}/api/proxy/bedrock"`);
        expect(code).toContain('requestHandler: new NodeHttpHandler()');
        await expect(page.getByTestId('snippet-pass-through-bedrock').locator('pre').textContent()).resolves.toContain(
          'x-proxy-token',
        );
        expect(await overflowsHorizontally(page)).toBe(false);
        await card.scrollIntoViewIfNeeded();
        await screenshot(page, `${size}-integrations-bedrock`, { fullPage: false });

        // A saved key: its hint is shown, never the key; deleting it brings the role back.
        const key = `ABSKQmVkcm9ja0FQSUtleS${randomBytes(16).toString('hex')}`;
        world.proxy.secrets.add(key);
        await page.getByTestId('key-input-bedrock').fill(key);
        await page.getByTestId('key-save-bedrock').click();
        await page.locator('[data-testid=key-notice-bedrock]', { hasText: 'Key saved.' }).waitFor();
        await expect(page.getByTestId('key-badge-bedrock').textContent()).resolves.toBe('Key saved');
        await expect(page.getByTestId('key-status-bedrock').textContent()).resolves.toMatch(/^Saved key .+, saved /);
        await expect(page.getByTestId('key-hint-bedrock').textContent()).resolves.not.toContain(key.slice(8, -4));
        expect(await page.content()).not.toContain(key);
        await screenshot(page, `${size}-integrations-bedrock-key`, { fullPage: false });
        await page.getByTestId('key-delete-bedrock').click();
        await page.getByRole('button', { name: 'Delete', exact: true }).click();
        await page.locator('[data-testid=key-notice-bedrock]', { hasText: 'Key deleted.' }).waitFor();
        await expect(page.getByTestId('key-badge-bedrock').textContent()).resolves.toBe(
          'Signed by local AWS credentials',
        );
      },
    );

    test.each<ViewportName>(['laptop', 'phone'])(
      'Overview and Logs (%s): Bedrock rows with their model, tokens and cost',
      async (size) => {
        const page = await signedInTab(world, account.token, size);
        const statsAnswer = page.waitForResponse((r) => r.url().includes('/api/stats'));
        await loadRoute(page, world.proxy.url, 'overview');
        const stats = (await (await statsAnswer).json()) as Stats;
        const model = stats.by_model.find((row) => row.model === MODEL)!;
        expect(model).toMatchObject({
          provider: 'bedrock',
          requests: 3,
          input_tokens: 3 * (U.input + U.cacheRead + U.cacheWrite),
          output_tokens: 3 * U.output,
        });
        expect(Math.round(model.cost_usd * 1e9)).toBe(3 * BEDROCK_COST_NANOS);
        const row = page.locator(`[data-testid=top-model-row][data-model="${MODEL}"]`);
        const text = await row.textContent();
        expect(text).toContain('Amazon Bedrock');
        expect(text).toContain(formatUsd(model.cost_usd));
        if (size === 'laptop')
          expect(text).toContain(`${formatInt(model.input_tokens)} / ${formatInt(model.output_tokens)}`);
        await expect(page.getByTestId('top-requesters').textContent()).resolves.toContain(USER);
        expect(await overflowsHorizontally(page)).toBe(false);
        await screenshot(page, `${size}-overview-bedrock`);

        await openPage(page, 'logs');
        const rows = page.locator('[data-testid=log-row][data-provider=bedrock]');
        await expect(rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-kind')))).resolves.toEqual([
          'invoke',
          'converse',
          'converse',
        ]);
        const logs = (await (await world.proxy.api('/api/logs?provider=bedrock', { token: account.token })).json()) as {
          items: LogRow[];
        };
        expect(logs.items.map((r) => r.stream)).toEqual([false, true, false]);
        for (let i = 0; i < 3; i++) {
          const shown = (await rows.nth(i).textContent()) ?? '';
          expect(shown).toContain('Amazon Bedrock');
          expect(shown).toContain(MODEL);
          expect(shown).toContain(`${formatInt(U.input + U.cacheRead + U.cacheWrite)} / ${formatInt(U.output)}`);
          expect(shown).toContain(formatUsd(BEDROCK_COST_NANOS / 1e9));
          expect(shown).toContain(USER);
        }
        await expect(rows.nth(0).locator('[title^="Prompt cache"]').getAttribute('title')).resolves.toBe(
          `Prompt cache: ${formatInt(U.cacheRead)} read, ${formatInt(U.cacheWrite)} written`,
        );
        expect(await overflowsHorizontally(page)).toBe(false);
        await screenshot(page, `${size}-logs-bedrock`);

        // The detail of a row: its prompt-cache tokens, price source and how stored mode reached Bedrock.
        await rows.nth(0).click();
        const detail = page.locator('[data-testid=log-detail][data-state=ready]');
        await detail.waitFor();
        const shownDetail = (await detail.textContent()) ?? '';
        expect(shownDetail).toContain(`Cache-read tokens${formatInt(U.cacheRead)}`);
        expect(shownDetail).toContain(`Cache-write tokens${formatInt(U.cacheWrite)}`);
        expect(shownDetail).toContain(`Modestored (the proxy’s AWS role, or the saved key)`);
        expect(shownDetail).toContain(`${formatInt(BEDROCK_COST_NANOS)} nano-USD`);
        expect(shownDetail).toContain(`Price source${logs.items[0]!.price_source}`);
        await screenshot(page, `${size}-logs-bedrock-detail`, { fullPage: false });
      },
    );
  });

/** On a server started with `noAwsCredentialsEnv()`. */
export const bedrockWithoutCredentialsTests = (world: BrowserWorld) =>
  describe('Amazon Bedrock on the dashboard of a machine with no AWS credentials', () => {
    let account: Account;

    beforeAll(async () => {
      const { proxy } = world;
      account = await proxy.createAccount('no-aws-credentials');
      const bedrock = bedrockClient(proxy.proxyBase, account.token, { 'x-proxy-user': USER });
      await expect(bedrock.send(new ConverseCommand({ modelId: MODEL, messages }))).rejects.toBeInstanceOf(
        AccessDeniedException,
      );
      await proxy.waitForRows(account.token, 1);
    });

    test('Integrations: the Bedrock card says no AWS credentials were found, and how to give some', async () => {
      const page = await openSignedIn(world, account.token, 'integrations');
      await expect(page.getByTestId('key-badge-bedrock').textContent()).resolves.toBe('No AWS credentials found');
      await expect(page.getByTestId('key-status-bedrock').textContent()).resolves.toBe(
        'No key saved, and the proxy found no AWS credentials on this machine to sign Amazon Bedrock requests with: start it with AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, set, or save an API key for Amazon Bedrock here.',
      );
      await page.getByTestId('key-card-bedrock').scrollIntoViewIfNeeded();
      await screenshot(page, 'laptop-integrations-bedrock-no-credentials', { fullPage: false });
    });
  });
