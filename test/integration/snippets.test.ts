/**
 * The dashboard's code snippets work as pasted: every curl snippet is run by a shell against the real
 * local server (stored key and pass-through), every TypeScript snippet type-checks under strict
 * TypeScript and is run by Node with its SDK (OpenAI, Anthropic, the AWS SDK for Bedrock), and every
 * Python snippet parses as Python. Each one run sends the tags it shows (`x-proxy-tags`), and they
 * reach the row.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROVIDERS } from '../../lambda/dashboard/src/providers';
import { snippet, TOKEN_PLACEHOLDER } from '../../lambda/dashboard/src/snippets';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { typeCheckAsUserModules } from '../support/type-check';

const run = promisify(execFile);
const ROOT = join(__dirname, '../..');

/** The tags every snippet sends with its request (`x-proxy-tags: team=search, feature=autocomplete`). */
const SNIPPET_TAGS = { team: 'search', feature: 'autocomplete' };

function hasPython(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

describe.each(PROVIDERS.map((p) => [p.name, p] as const))('%s snippets', (_name, provider) => {
  // A provider's two curl runs and its SDK run at once: each its own process, read back by its own request id or account.
  test.concurrent.each(['stored', 'pass-through'] as const)(
    'the %s curl snippet, pasted into a shell, gets an answer and a row',
    async (mode) => {
      const code = snippet(provider, 'curl', mode, proxy.proxyBase)
        .replaceAll(TOKEN_PLACEHOLDER, proxy.account.token)
        .replace(
          `<your ${provider.name} key>`,
          (proxy.storedKeys as Record<string, string>)[provider.id] ?? 'ABSKb3duLWJlZHJvY2sta2V5LWZvci10ZXN0cw==',
        );
      expect(code).not.toContain('<your');
      const headers = join(mkdtempSync(join(tmpdir(), 'snippet-')), 'headers.txt');
      const { stdout } = await run('bash', ['-c', `${code} -sS -D ${headers}`], { encoding: 'utf8' }).catch(
        (error: { stdout?: string; stderr?: string; message: string }) => {
          throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
        },
      );
      const body = JSON.parse(stdout) as { choices?: unknown[]; content?: unknown[]; output?: unknown };
      expect(body.choices ?? body.content ?? body.output).toBeDefined();
      const id = /^x-proxy-request-id: *(\S+)/im.exec(readFileSync(headers, 'utf8'))?.[1];
      expect(id).toBeDefined();
      const [row] = await proxy.rowsFor(proxy.account.token, [id!]);
      expect(row).toMatchObject({ provider: provider.id, mode, status_code: 200 });
      // The snippet shows how to send tags, and they reach the row.
      expect(row!.tags).toEqual(SNIPPET_TAGS);
    },
  );

  test.concurrent(
    'the stored-key TypeScript snippet, run by Node with the SDK, gets an answer and a row with its tags',
    async () => {
      const account = await proxy.createAccount(`snippet-ts-${provider.id}`);
      // A provider reached through AWS needs no saved key: the proxy signs with its AWS credentials (the fake's).
      if (provider.sdk !== 'aws') await proxy.saveKey(account.token, provider.id as ProviderId);
      const code = snippet(provider, 'typescript', 'stored', proxy.proxyBase).replaceAll(
        TOKEN_PLACEHOLDER,
        account.token,
      );
      // The snippet is plain JavaScript with imports (no TypeScript-only syntax); run from the repository so the SDKs resolve.
      await run(process.execPath, ['--input-type=module', '-e', code], {
        cwd: join(__dirname, '../..'),
        encoding: 'utf8',
      }).catch((error: { stderr?: string; message: string }) => {
        throw new Error(`${error.message}\n${error.stderr ?? ''}`);
      });
      const [row] = await proxy.waitForRows(account.token, 1);
      expect(row).toMatchObject({ provider: provider.id, mode: 'stored', status_code: 200, tags: SNIPPET_TAGS });
    },
  );

  const pythonTest = hasPython()
    ? test.each(['stored', 'pass-through'] as const)
    : test.skip.each(['stored', 'pass-through'] as const);
  pythonTest('the %s Python snippet is valid Python', (mode) => {
    const code = snippet(provider, 'python', mode, proxy.proxyBase);
    expect(code).toContain(
      `${provider.sdk === 'aws' ? 'endpoint_url' : 'base_url'}="${proxy.proxyBase}${provider.basePath}"`,
    );
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: code });
  });
});

test('Bedrock’s pass-through TypeScript snippet sends the caller’s Bedrock API key on, and the proxy token beside it', async () => {
  const provider = PROVIDERS.find((p) => p.sdk === 'aws')!;
  const account = await proxy.createAccount(`snippet-ts-pass-${provider.id}`);
  const key = 'ABSKc25pcHBldC1wYXNzLXRocm91Z2gta2V5LWZvci10ZXN0cw==';
  const code = snippet(provider, 'typescript', 'pass-through', proxy.proxyBase)
    .replaceAll(TOKEN_PLACEHOLDER, account.token)
    .replace(`<your ${provider.name} key>`, key);
  expect(code).not.toContain('<your');
  await run(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }).catch(
    (error: { stderr?: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stderr ?? ''}`);
    },
  );
  const [row] = await proxy.waitForRows(account.token, 1);
  expect(row).toMatchObject({ provider: provider.id, mode: 'pass-through', status_code: 200, tags: SNIPPET_TAGS });
  expect(proxy.fakes.bedrock.requests.at(-1)).toMatchObject({ auth: 'bearer', bearer: key });
});

test('every TypeScript snippet type-checks as written, under strict TypeScript in an ES module', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'snippet-ts-'));
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const files = PROVIDERS.flatMap((provider) =>
      (['stored', 'pass-through'] as const).map((mode) => {
        const file = join(scratch, `${provider.id}-${mode}.mts`);
        writeFileSync(file, snippet(provider, 'typescript', mode, 'http://127.0.0.1:8787/api/proxy'));
        return file;
      }),
    );
    const problems = typeCheckAsUserModules(files, scratch);
    expect(problems).toEqual([]);
    expect(files.length).toBe(PROVIDERS.length * 2);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
