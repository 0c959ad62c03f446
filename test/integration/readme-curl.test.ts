/**
 * The README's quick-start curl lines, run as written with the real curl (only the port differs):
 * a bare `-d` sends curl's default form content type, and the proxy reads the JSON body anyway.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startProxy, type ProxyServer } from '../support/proxy-server';

const README = readFileSync(join(resolve(__dirname, '../..'), 'README.md'), 'utf8');

/** The shell block that follows "Or with curl", as separate commands (continuation lines joined). */
function readmeCurlCommands(): string[] {
  const from = README.indexOf('Or with curl');
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(from))![1]!;
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

test('the README shows a chat-completions and a messages curl call with a bare -d', () => {
  const commands = readmeCurlCommands();
  expect(commands).toHaveLength(2);
  for (const command of commands) {
    expect(command).toContain(' -d ');
    expect(command).not.toMatch(/content-type/i);
  }
});

test.each([0, 1])('README curl line %i works against the local server as written', async (index) => {
  const command = readmeCurlCommands()[index]!.replaceAll('http://127.0.0.1:8787', proxy.url);
  // Asynchronously: the fake providers answer from this process.
  const run = await promisify(execFile)('bash', ['-c', `${command} -w '\\n%{http_code}'`], { encoding: 'utf8', env: { ...process.env, PROXY_TOKEN: proxy.account.token }, timeout: 30_000 });
  const [body, status] = [run.stdout.slice(0, run.stdout.lastIndexOf('\n')), run.stdout.slice(run.stdout.lastIndexOf('\n') + 1)];
  expect({ status, stderr: run.stderr, body: status === '200' ? '' : body }).toEqual({ status: '200', stderr: '', body: '' });
  const answer = JSON.parse(body) as { choices?: unknown[]; content?: unknown[] };
  expect(answer.choices ?? answer.content).toEqual(expect.arrayContaining([expect.anything()]));
});
