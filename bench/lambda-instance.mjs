// One Lambda instance, as the streaming runtime runs it: the bundle's handler is called with
// function URL events, one invocation at a time, and each response stream receives the prelude
// (JSON + 8 NUL bytes, as Lambda's wire protocol has it) and then the body. For each invocation it
// reports the process CPU used until the prelude (what delays the answer) and until the invocation
// ended (row writes included: what Lambda bills), and the peak RSS of the instance at the end.
// Usage: node lambda-instance.mjs <handler bundle> <jobs json file>; prints one JSON report.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      stream.write(Buffer.concat([Buffer.from(JSON.stringify(prelude)), Buffer.alloc(8)]));
      stream.preludeAt = { cpu: process.cpuUsage(), wall: performance.now() };
      return stream;
    },
  },
};

const [bundle, jobsFile] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsFile, 'utf8'));
const { handler } = await import(pathToFileURL(bundle).href);
const cpuMs = (from, to) => (to.user - from.user + to.system - from.system) / 1000;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let sequence = 0;
function event(job) {
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: job.path,
    rawQueryString: '',
    headers: { host: 'lambda-url.local', 'content-type': 'application/json', ...job.headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'bench',
      domainName: 'lambda-url.local',
      domainPrefix: 'bench',
      http: { method: job.method ?? 'POST', path: job.path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: `bench-${++sequence}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body: job.body,
    isBase64Encoded: false,
  };
}

async function invoke(job) {
  const chunks = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await handler(event(job), stream, { awsRequestId: `bench-${sequence}`, getRemainingTimeInMillis: () => 900_000 });
  const end = { cpu: process.cpuUsage(), wall: performance.now() };
  const text = Buffer.concat(chunks).toString('utf8');
  const status = Number(/"statusCode":(\d+)/.exec(text)?.[1] ?? 0);
  return {
    status,
    body: text.slice(text.indexOf('\0'.repeat(8)) + 8),
    cpuBeforeAnswerMs: stream.preludeAt ? cpuMs(cpu, stream.preludeAt.cpu) : undefined,
    cpuTotalMs: cpuMs(cpu, end.cpu),
    wallBeforeAnswerMs: stream.preludeAt ? stream.preludeAt.wall - wall : undefined,
    wallTotalMs: end.wall - wall,
  };
}

const report = {};
for (const job of jobs) {
  const results = [];
  for (let i = 0; i < job.warmup + job.count; i++) {
    const result = await invoke(job);
    if (i === 0 && job.expectStatus && result.status !== job.expectStatus) throw new Error(`${job.name}: answered ${result.status}: ${result.body.slice(0, 300)}`);
    if (i >= job.warmup) results.push(result);
    if (job.keep) report[`${job.name}.answer`] = result.body;
    if (job.pauseMs) await pause(job.pauseMs);
  }
  report[job.name] = results.map(({ body: _body, ...figures }) => figures);
}
report.maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(report));
process.exit(0);
