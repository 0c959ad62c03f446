/**
 * Lambda stops an invocation at its time limit, rows and all. An answer still running when the
 * remaining time falls to the reserve for the row (docs/deploy.md, "Timeout") is ended by the
 * proxy with the stream's own error event, and its row is written while the function still runs.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ROW_WRITE_RESERVE_MS } from '../../lambda/pipeline/forward-upstream';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';

/** What the invocation has left when the handler asks, as Lambda's context would say. */
let remaining = 60_000;
let proxy: InProcessProxy;

beforeAll(async () => {
  proxy = await startInProcessProxy({ remainingTimeMs: () => remaining });
});
afterAll(async () => {
  await proxy?.close();
});

interface Row {
  status_code: number;
  error?: string;
  input_tokens: number;
  stream: boolean;
}

async function rowsOf(token: string): Promise<Row[]> {
  await proxy.settled();
  const response = await proxy.api('/api/logs?limit=10', { token });
  return ((await response.json()) as { items: Row[] }).items;
}

const streamed = (token: string) =>
  new Anthropic({ baseURL: proxy.proxyBase, apiKey: token, maxRetries: 0 }).messages
    .stream({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: 'a long story' }] })
    .finalMessage();

it('a stream still running at the reserve before the time limit ends with its error event, and its row says why', async () => {
  const token = await proxy.createAccount('time-limit');
  // The limit comes 300 ms into an answer that would take about 4 s.
  remaining = ROW_WRITE_RESERVE_MS + 300;
  proxy.fakes.fakes['prov-a'].next({ chunks: 40, chunkIntervalMs: 100 });

  const error: unknown = await streamed(token).catch((thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(Anthropic.APIError);
  expect(String((error as Error).message)).toContain("before the function's time limit");

  const [row] = await rowsOf(token);
  expect(row).toMatchObject({ status_code: 200, stream: true });
  expect(row.error).toContain("before the function's time limit, to record its usage");
  // The usage the stream had reported before the cut (its input, in the first event) is kept.
  expect(row.input_tokens).toBe(proxy.fakes.fakes['prov-a'].requests.at(-1)!.response.usage!.inputTokens);
});

it('with time to spare, the same answer runs to its end', async () => {
  const token = await proxy.createAccount('time-to-spare');
  remaining = 60_000;
  proxy.fakes.fakes['prov-a'].next({ chunks: 5, chunkIntervalMs: 20 });
  const message = await streamed(token);
  expect(message.stop_reason).toBeTruthy();
  const [row] = await rowsOf(token);
  expect(row.status_code).toBe(200);
  expect(row.error).toBeUndefined();
});
