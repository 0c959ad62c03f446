/**
 * The README as a newcomer meets it: its quick-start commands are the project's, its curl lines and
 * its SDK examples run as written against the local server (only the address and the token differ),
 * and each leaves the usage row the README promises.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULTS } from '../../lib/settings';
import { BEDROCK_COST_NANOS } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { typeCheckAsUserModules } from '../support/type-check';

const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const README_BASE = 'http://127.0.0.1:8787';
const TOKEN_PLACEHOLDER = "'sk-proxy-…'";
const run = promisify(execFile);

/** The text of a `## ` section of the README, up to the next one. */
function section(heading: string): string {
  const from = README.indexOf(`\n## ${heading}\n`);
  expect(from).toBeGreaterThan(-1);
  const rest = README.slice(from + 1);
  const end = rest.indexOf('\n## ', 1);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The fenced code blocks of one language in a piece of the README. */
const codeBlocks = (text: string, language: string) =>
  [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

/** The shell block that follows "or with curl", as separate commands (continuation lines joined). */
function readmeCurlCommands(): string[] {
  const block = codeBlocks(README.slice(README.indexOf('or with curl')), 'sh')[0]!;
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.startsWith('curl '));
}

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => proxy?.stop());

describe('Quick start', () => {
  const commands = codeBlocks(section('Quick start'), 'bash')[0]!
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;

  test('has two commands, each naming only npm scripts and files the project has', () => {
    expect(commands).toHaveLength(2);
    for (const step of commands.flatMap((command) => command.split('&&').map((part) => part.trim()))) {
      const npmScript = /^npm (?:run )?(\S+)/.exec(step)?.[1];
      if (npmScript && !['install', 'ci'].includes(npmScript)) expect(scripts[npmScript]).toBeDefined();
      const file = /^(?:bash|sh|node) (\S+)/.exec(step)?.[1];
      if (file) expect(existsSync(join(ROOT, file))).toBe(true);
      expect(npmScript ?? file).toBeDefined();
    }
  });

  test('the second command is what CI runs', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toContain(commands[1]);
  });
});

describe('the quick-start curl lines', () => {
  test('the README shows a chat-completions and a messages curl call with a bare -d', () => {
    const commands = readmeCurlCommands();
    expect(commands).toHaveLength(2);
    for (const command of commands) {
      expect(command).toContain(' -d ');
      expect(command).not.toMatch(/content-type/i);
    }
  });

  // Both at once: independent calls, each its own curl process.
  test.concurrent.each([0, 1])('README curl line %i works against the local server as written', async (index) => {
    const command = readmeCurlCommands()[index]!.replaceAll(README_BASE, proxy.url);
    // Asynchronously: the fake providers answer from this process.
    const result = await run('bash', ['-c', `${command} -w '\\n%{http_code}'`], {
      encoding: 'utf8',
      env: { ...process.env, PROXY_TOKEN: proxy.account.token },
      timeout: 30_000,
    });
    const [body, status] = [
      result.stdout.slice(0, result.stdout.lastIndexOf('\n')),
      result.stdout.slice(result.stdout.lastIndexOf('\n') + 1),
    ];
    expect({ status, stderr: result.stderr, body: status === '200' ? '' : body }).toEqual({
      status: '200',
      stderr: '',
      body: '',
    });
    const answer = JSON.parse(body) as { choices?: unknown[]; content?: unknown[] };
    expect(answer.choices ?? answer.content).toEqual(expect.arrayContaining([expect.anything()]));
  });
});

describe('the SDK examples', () => {
  const examples = codeBlocks(section('Use it from an SDK'), 'ts');
  /** What each example calls, in the README's order, and the row it must leave. */
  const expected = [
    { calls: 'anthropic.messages.create', row: { provider: 'prov-a', kind: 'messages', stream: false } },
    {
      calls: 'openai.chat.completions.create',
      row: { provider: 'prov-b', kind: 'chat', stream: false, requester: 'alice' },
    },
    { calls: 'openai.responses.create', row: { provider: 'prov-b', kind: 'responses', stream: true } },
    // Priced exactly as genai-prices prices this profile (test/unit/pricing/price-table.test.ts).
    {
      calls: 'bedrock.send',
      row: {
        provider: 'bedrock',
        kind: 'converse',
        stream: false,
        model: 'eu.anthropic.claude-sonnet-4-6',
        cost_nanos: BEDROCK_COST_NANOS,
        priced: true,
      },
    },
  ];

  test("the Bedrock example's model is served from the stack's default region: a foundation model, a global profile or one of that region's geography", () => {
    const modelId = /modelId: '([^']+)'/.exec(examples.find((code) => code.includes('bedrock.send('))!)![1]!;
    const geography = DEFAULTS.region.split('-')[0]!;
    expect(modelId).toMatch(new RegExp(`^((${geography}|global)\\.)?anthropic\\.`));
  });

  test('one example per API style: messages, chat completions, Responses API, Bedrock, each pointed at the local server', () => {
    expect(examples.map((code) => expected.findIndex((e) => code.includes(`${e.calls}(`)))).toEqual([0, 1, 2, 3]);
    for (const code of examples) {
      expect(code).toMatch(new RegExp(`(baseURL|endpoint): '${README_BASE}/api/proxy`));
      expect(code).toMatch(new RegExp(`(apiKey|token): ${TOKEN_PLACEHOLDER}`));
    }
  });

  let scratch: string;
  beforeAll(() => {
    // The examples import the SDKs as a user's project would: from a node_modules beside them.
    scratch = mkdtempSync(join(tmpdir(), 'readme-sdk-'));
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  });

  afterAll(() => {
    if (scratch && existsSync(scratch)) rmSync(scratch, { recursive: true, force: true });
  });

  // All four at once (each its own process, account and row): the same runs, in the time of the slowest.
  test.concurrent.each(expected.map((e, i) => [e.calls, i] as const))(
    'the %s example runs as written and leaves its row',
    async (_calls, index) => {
      // A fresh account per example, so the example's row is the only one.
      const account = await proxy.createAccount(`readme-${index}`);
      // Bedrock needs no saved key: the proxy signs with its AWS credentials (the fake Bedrock's).
      if (expected[index]!.row.provider !== 'bedrock')
        await proxy.saveKey(account.token, expected[index]!.row.provider as 'prov-a' | 'prov-b');
      const file = join(scratch, `example-${index}.mts`);
      writeFileSync(
        file,
        examples[index]!.replaceAll(README_BASE, proxy.url).replaceAll(
          TOKEN_PLACEHOLDER,
          JSON.stringify(account.token),
        ),
      );
      const result = await run(process.execPath, ['--import', 'tsx', file], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).not.toBe('');
      const [row] = await proxy.waitForRows(account.token, 1);
      expect(row).toMatchObject({ ...expected[index]!.row, mode: 'stored', status_code: 200, cached: false });
      expect(row!.input_tokens).toBeGreaterThan(0);
    },
  );
  // After the runs, which need the server: checking types takes a long while on a loaded machine.
  test('the examples type-check as written, under strict TypeScript in an ES module', () => {
    const files = examples.map((code, index) => {
      const file = join(scratch, `typed-${index}.mts`);
      writeFileSync(file, code);
      return file;
    });
    const problems = typeCheckAsUserModules(files, scratch);
    expect(problems).toEqual([]);
  });
});
