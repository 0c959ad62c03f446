/**
 * `npm run bench:memory`: which Lambda memory size to deploy by default, from measurements.
 *
 * The bundle's handler (dist/lambda/handler.mjs) runs in a fresh process under a stand-in of
 * Lambda's streaming runtime (bench/lambda-instance.mjs), one invocation at a time as a Lambda
 * instance serves them, against DynamoDB Local and the bench's fake upstream. Each invocation's
 * process CPU is measured until the answer's prelude and until the invocation ends (row write
 * included), with the instance's peak RSS, also after a request with a body at the 6 MB limit.
 *
 * Lambda gives a function CPU in proportion to its memory (one vCPU at 1,769 MB). This machine
 * cannot be throttled portably (a cgroup needs root and Lambda's scheduling period is not
 * published), so the throttled time is computed from the measured CPU instead: under a share s,
 * CPU work of c ms takes c / s ms, while store and provider waits are unchanged. That is the
 * worst case (no burst above the share within a scheduling period), so the latencies are upper
 * bounds. Cost per million at a 3 s upstream follows from the billed duration, with the request
 * path's DynamoDB units and the stream consumer's cost (a lone row per batch, its worst case).
 * Writes bench/MEMORY.md and docs/deploy.md's cost table (test/bench/memory-choice.test.ts).
 * `--render-only`: the choice again from bench/memory.json's figures and the committed run, no new measurement
 * (after the cost model or the committed run changed).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { ensureTables } from '../lambda/store/dynamodb/create-tables';
import { loadConfig } from '../lambda/config';
import { OWN_PROVIDER_KEY } from './contenders';
import { startBenchUpstream } from './fake-upstream';
import { chooseMemory, COST_TABLE_HEADER, costTableRows, renderMemoryChoice, type InstanceFigures, type MemoryChoice } from './memory-choice';
import { JSON_SHAPE } from './phases';
import { LAMBDA_BUNDLE, ROOT } from './processes';
import { percentiles } from './stats';

const INSTANCE = join(ROOT, 'bench', 'lambda-instance.mjs');
const CHAT_PATH = '/api/proxy/prov-b/v1/chat/completions';
const COUNT = Number(process.env.MEMORY_BENCH_COUNT ?? 300);

interface Invocation {
  status: number;
  cpuBeforeAnswerMs?: number;
  cpuTotalMs: number;
  wallBeforeAnswerMs?: number;
  wallTotalMs: number;
}

function chatBody(content: string): string {
  return JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], max_tokens: 256 });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  const dynamo = await startDynamoDbLocal();
  const upstream = await startBenchUpstream(JSON_SHAPE);
  const adminKey = 'bench-memory-admin-key-0123456789';
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    ADMIN_KEY: adminKey,
    TABLE_PREFIX: 'benchmem-',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    UPSTREAM_BASE_URL_PROV_B: `${upstream.origin}/v1`,
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  };
  // Asynchronous: the fake upstream answers from this process's event loop.
  const instance = async (jobs: unknown[]) => {
    const jobsFile = join(dataDir, 'jobs.json');
    writeFileSync(jobsFile, JSON.stringify(jobs));
    const { stdout } = await promisify(execFile)(process.execPath, [INSTANCE, LAMBDA_BUNDLE, jobsFile], { env, maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  try {
    const config = loadConfig(env);
    await ensureTables(createDynamoClients({ region: config.region, endpoint: dynamo.endpoint }).raw, config.tables);
    const admin = { authorization: `Bearer ${adminKey}` };
    const created = await instance([{ name: 'account', path: '/api/admin/accounts', headers: admin, body: '{"name":"bench"}', warmup: 0, count: 1, keep: true, expectStatus: 201 }]);
    const token = String((JSON.parse(String(created['account.answer'])) as { token: string }).token);
    const bearer = { authorization: `Bearer ${token}` };
    const small = await instance([
      { name: 'key', method: 'PUT', path: '/api/keys/prov-b', headers: bearer, body: JSON.stringify({ key: OWN_PROVIDER_KEY }), warmup: 0, count: 1, expectStatus: 200 },
      { name: 'stored', path: CHAT_PATH, headers: bearer, body: chatBody('Summarise why a proxy should add little latency.'), warmup: 30, count: COUNT, pauseMs: 20, expectStatus: 200 },
    ]);
    // Just under the 6 MB body limit: the instance's memory high-water mark with the largest request it accepts.
    const large = await instance([{ name: 'large', path: CHAT_PATH, headers: bearer, body: chatBody('x'.repeat(6 * 1024 * 1024 - 200)), warmup: 0, count: 3, pauseMs: 20, expectStatus: 200 }]);
    const runs = small.stored as Invocation[];
    const median = (values: number[]) => percentiles(values).p50;
    const figures: InstanceFigures = {
      invocations: runs.length,
      cpuBeforeAnswerMs: median(runs.map((r) => r.cpuBeforeAnswerMs ?? r.cpuTotalMs)),
      cpuTotalMs: median(runs.map((r) => r.cpuTotalMs)),
      wallBeforeAnswerMs: median(runs.map((r) => r.wallBeforeAnswerMs ?? r.wallTotalMs)),
      wallTotalMs: median(runs.map((r) => r.wallTotalMs)),
      peakRssMb: Number(small.maxRssMb),
      peakRssLargeBodyMb: Number(large.maxRssMb),
    };
    writeChoice(figures, new Date().toISOString());
  } finally {
    await upstream.close();
    await dynamo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Chooses from the figures and the committed run, and writes memory.json, MEMORY.md and docs/deploy.md's table. */
function writeChoice(figures: InstanceFigures, date: string): void {
  const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Parameters<typeof chooseMemory>[1];
  const choice = chooseMemory(figures, results);
  writeFileSync(join(ROOT, 'bench', 'memory.json'), JSON.stringify({ date, figures, choice }, null, 2) + '\n');
  writeFileSync(join(ROOT, 'bench', 'MEMORY.md'), renderMemoryChoice(figures, choice));
  const docsPath = join(ROOT, 'docs', 'deploy.md');
  const [start, end] = ['<!-- memory-table:start -->\n', '\n<!-- memory-table:end -->'];
  const docs = readFileSync(docsPath, 'utf8');
  const from = docs.indexOf(start) + start.length;
  const to = docs.indexOf(end);
  if (from < start.length || to < from) throw new Error(`docs/deploy.md has no ${start.trim()} … ${end.trim()} markers`);
  writeFileSync(docsPath, docs.slice(0, from) + [...COST_TABLE_HEADER, ...costTableRows(choice)].join('\n') + docs.slice(to));
  process.stdout.write(renderMemoryChoice(figures, choice));
}

function renderOnly(): void {
  const stored = JSON.parse(readFileSync(join(ROOT, 'bench', 'memory.json'), 'utf8')) as { date: string; figures: InstanceFigures; choice: MemoryChoice };
  writeChoice(stored.figures, stored.date);
}

(process.argv.includes('--render-only') ? Promise.resolve().then(renderOnly) : main()).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
