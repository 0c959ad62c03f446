/**
 * Shell examples of the docs/ pages, run as written with the real curl against the local server:
 * only the variables the example asks the reader to set are given values.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startProxy, type ProxyServer } from '../support/proxy-server';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/** The first `sh` block of a page: its curl commands (continuation lines joined) and its `# → answer` lines. */
function shellExample(page: string): { commands: string[]; answers: unknown[] } {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(text)![1]!.replace(/\\\n\s*/g, ' ');
  const lines = block.split('\n');
  return {
    commands: lines.filter((line) => line.startsWith('curl ')),
    answers: lines.filter((line) => line.startsWith('# → ')).map((line) => JSON.parse(line.slice(4)) as unknown),
  };
}

async function curl(command: string, env: Record<string, string>): Promise<{ status: string; body: unknown }> {
  const result = await run('bash', ['-c', `${command} -w '\\n%{http_code}'`], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  expect(result.stderr).toBe('');
  const cut = result.stdout.lastIndexOf('\n');
  return { status: result.stdout.slice(cut + 1), body: JSON.parse(result.stdout.slice(0, cut)) as unknown };
}

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => proxy?.stop());

test('docs/budgets.md: setting a token budget and a requester budget with curl, as shown', async () => {
  const { commands, answers } = shellExample('docs/budgets.md');
  expect(commands).toHaveLength(2);
  expect(answers).toHaveLength(1);
  const account = await proxy.createAccount('budgets-example');
  const env = { BASE: proxy.url, MANAGE_TOKEN: account.token, TOKEN_ID: account.tokenId };

  const tokenBudget = await curl(commands[0]!, env);
  expect(tokenBudget.status).toBe('200');
  // The documented answer, but for its spend and reset time, which depend on the day it is run.
  const { spent_usd: _spent, resets_at: _resets, ...documented } = answers[0] as Record<string, unknown>;
  expect(Object.keys(tokenBudget.body as object).sort()).toEqual(Object.keys(answers[0] as object).sort());
  expect(tokenBudget.body).toMatchObject({ ...documented, spent_usd: 0 });
  const now = new Date();
  expect((tokenBudget.body as { resets_at: string }).resets_at).toBe(
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  );

  const requesterBudget = await curl(commands[1]!, env);
  expect(requesterBudget).toMatchObject({ status: '200', body: { limit_usd: 2.5, period: 'day', spent_usd: 0 } });
  const listed = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
    requesters: unknown[];
  };
  expect(listed.requesters).toEqual([
    expect.objectContaining({ requester: 'intern-script', limit_usd: 2.5, period: 'day' }),
  ]);
});

test("docs/fallbacks.md: an account's default fallbacks set with curl, as shown", async () => {
  const { commands } = shellExample('docs/fallbacks.md');
  expect(commands).toHaveLength(1);
  const account = await proxy.createAccount('fallbacks-example');
  const set = await curl(commands[0]!, { BASE: proxy.url, MANAGE_TOKEN: account.token });
  expect(set.status).toBe('200');
  const listed = (await (await proxy.api('/api/fallbacks', { token: account.token })).json()) as {
    fallbacks: unknown[];
  };
  expect(listed.fallbacks).toEqual([
    expect.objectContaining({
      provider: 'prov-b',
      model: 'gpt-4o',
      fallbacks: ['gpt-4o-mini', 'prov-d/mistral-small-latest'],
    }),
  ]);
});
