/**
 * One 20 MB event in a stream: passed through byte for byte without being
 * parsed, at about the CPU cost of passing 20 MB of JSON, while other requests
 * (`/api/health`) keep being answered. Usage from the events after it still counts.
 */
import { createHash } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { rowOf } from './support/rows';
import { cpuSecondsOf, startScriptedUpstream, type Script, type ScriptedUpstream } from './support/scripted-upstream';

jest.setTimeout(300_000);

const MB = 1024 * 1024;
const EVENT_MB = 20;

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startProxy({ env: { UPSTREAM_BASE_URL_PROV_B: `${upstream.url}/v1` } });
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

const chunk = (fields: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-big', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'model-b', ...fields })}\n\n`;
const USAGE = { prompt_tokens: 21, completion_tokens: 13, total_tokens: 34 };

/** A stream whose second event is 20 MB, written in 64 KB pieces; every byte sent is recorded. */
function hugeEventStream(sent: Buffer[]): Script {
  return {
    status: 200,
    contentType: 'text/event-stream',
    async body(write) {
      const send = async (bytes: string | Buffer) => {
        sent.push(Buffer.from(bytes));
        await write(bytes);
      };
      await send(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }));
      const text = 'y'.repeat(EVENT_MB * MB);
      const event = chunk({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
      for (let at = 0; at < event.length; at += 64 * 1024) await send(event.slice(at, at + 64 * 1024));
      await send(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
      await send(chunk({ choices: [], usage: USAGE }));
      await send('data: [DONE]\n\n');
    },
  };
}

/** The same number of bytes as one JSON answer: the cost of passing bytes through. */
function hugeJson(): Script {
  return {
    status: 200,
    contentType: 'application/json',
    async body(write) {
      const body = JSON.stringify({
        id: 'chatcmpl-json',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'model-b',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'z'.repeat(EVENT_MB * MB) }, finish_reason: 'stop' },
        ],
        usage: USAGE,
      });
      for (let at = 0; at < body.length; at += 64 * 1024) await write(body.slice(at, at + 64 * 1024));
    },
  };
}

async function healthWhile(work: Promise<unknown>): Promise<number> {
  let done = false;
  void work.finally(() => (done = true));
  let answered = 0;
  while (!done) {
    const health = await fetch(`${proxy.url}/api/health`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    answered++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return answered;
}

test(`a ${EVENT_MB} MB event passes byte for byte, costs about what 20 MB of JSON costs, and /api/health answers meanwhile`, async () => {
  const token = proxy.account.token;
  const headers = { 'x-proxy-user': 'huge-event' };

  // Baseline: 20 MB of JSON through the same path.
  upstream.next(hugeJson());
  const cpuBeforeJson = await cpuSecondsOf(proxy.pid);
  const json = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'json baseline', headers });
  const jsonCpu = (await cpuSecondsOf(proxy.pid)) - cpuBeforeJson;
  expect(json.status).toBe(200);

  // The client asked for stream usage itself: the stream is passed on untouched.
  const sent: Buffer[] = [];
  upstream.next(hugeEventStream(sent));
  const cpuBefore = await cpuSecondsOf(proxy.pid);
  const streamed = callProxy(proxy, {
    provider: 'prov-b',
    token,
    prompt: 'huge event',
    headers,
    body: {
      model: 'model-b',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'huge' }],
    },
  });
  const healthAnswers = await healthWhile(streamed);
  const result = await streamed;
  const sseCpu = (await cpuSecondsOf(proxy.pid)) - cpuBefore;

  expect(result.status).toBe(200);
  const digest = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
  expect(digest(result.text)).toBe(digest(Buffer.concat(sent)));
  expect(healthAnswers).toBeGreaterThan(0);
  // The old decoder re-scanned the whole event on every chunk: tens of CPU seconds. A linear one is of the order of the JSON pass.
  expect(sseCpu).toBeLessThan(jsonCpu * 5 + 2);

  const row = await rowOf(proxy, token, result.requestId);
  expect(row).toMatchObject({
    status_code: 200,
    input_tokens: USAGE.prompt_tokens,
    output_tokens: USAGE.completion_tokens,
  });
  expect(proxy.output()).toMatch(/stream events over 16 MB passed on unparsed[^\n]*"events":1/);
});

test('when the proxy asked for stream usage itself, the huge event still reaches the client whole and only the usage chunk is held back', async () => {
  const sent: Buffer[] = [];
  upstream.next(hugeEventStream(sent));
  const result = await callProxy(proxy, {
    provider: 'prov-b',
    token: proxy.account.token,
    stream: true,
    prompt: 'huge event, usage not asked',
  });
  expect(result.status).toBe(200);
  const expected = Buffer.concat(sent)
    .toString('utf8')
    .replace(chunk({ choices: [], usage: USAGE }), '');
  expect(result.text.length).toBe(expected.length);
  expect(result.text === expected).toBe(true);
  const row = await rowOf(proxy, proxy.account.token, result.requestId);
  expect(row).toMatchObject({ input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens });
});
