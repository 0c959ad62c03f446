/**
 * The hot path's store calls, counted between the local server and DynamoDB Local: once warm, a
 * request with a stored key or a pass-through request makes one store call before it is forwarded
 * (the token gate) and one after the provider has answered (its usage row), JSON or stream alike.
 * A request naming its requester adds one read (that requester's budget) before forwarding.
 */
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { EVENTUALLY_MS } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { startStoreCallCounter, type StoreCall, type StoreCallCounter } from '../support/store-call-counter';

let fakes: AllFakes;
let counter: StoreCallCounter;
let proxy: ProxyServer;

beforeAll(async () => {
  fakes = await startAllFakes();
  // Each call is marked with the number of requests the provider had received when the call arrived.
  counter = await startStoreCallCounter(process.env.DYNAMODB_ENDPOINT!, () => fakes.fakes['prov-b'].requests.length);
  // The local stream consumer is off: in AWS the rollups are folded by another function, not by the one serving requests.
  proxy = await startProxy({ fakes, env: { DYNAMODB_ENDPOINT: counter.endpoint, STATS_CONSUMER: 'off' } });
});
afterAll(async () => {
  await proxy?.stop();
  await counter?.close();
  await fakes?.close();
});

type Mode = 'stored' | 'pass-through';

function headersFor(mode: Mode, requester?: string): Record<string, string> {
  const auth: Record<string, string> =
    mode === 'stored' ? { authorization: `Bearer ${proxy.account.token}` } : { authorization: 'Bearer sk-callers-own-key-0123456789', 'x-proxy-token': proxy.account.token };
  return { 'content-type': 'application/json', ...auth, ...(requester ? { 'x-proxy-user': requester } : {}) };
}

const isRowWrite = (call: StoreCall) => call.tables.some((table) => table.endsWith('usage-logs'));

/** Sends one request and returns the store calls it made: those that arrived before the provider had it, and those after. */
async function callsOf(mode: Mode, stream: boolean, prompt: string, requester?: string): Promise<{ before: StoreCall[]; after: StoreCall[] }> {
  const from = counter.calls.length;
  const seen = fakes.fakes['prov-b'].requests.length;
  const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
    method: 'POST',
    headers: headersFor(mode, requester),
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], ...(stream ? { stream: true } : {}) }),
  });
  await response.text();
  expect(response.status).toBe(200);
  await counter.waitFor(from, isRowWrite, EVENTUALLY_MS);
  const calls = counter.calls.slice(from);
  return { before: calls.filter((call) => call.mark === seen), after: calls.filter((call) => call.mark > seen) };
}

describe.each<[Mode, boolean]>([
  ['stored', false],
  ['stored', true],
  ['pass-through', false],
  ['pass-through', true],
])('%s key, stream %s', (mode, stream) => {
  test('one store call before forwarding and one after the answer: the usage row', async () => {
    // The first requests of an instance also read and cache what later ones reuse (the stored key).
    for (let i = 0; i < 2; i++) await callsOf(mode, stream, `warm ${i}`);
    for (let i = 0; i < 3; i++) {
      const { before, after } = await callsOf(mode, stream, `counted ${i}`);
      expect(before).toHaveLength(1);
      expect(isRowWrite(before[0]!)).toBe(false);
      expect(after).toHaveLength(1);
      expect(isRowWrite(after[0]!)).toBe(true);
    }
  });
});

test("a request naming its requester reads that requester's budget before forwarding: two calls before, one after", async () => {
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm requester ${i}`, 'alice@example.com');
  const { before, after } = await callsOf('stored', false, 'counted requester', 'alice@example.com');
  expect(before).toHaveLength(2);
  expect(before.some(isRowWrite)).toBe(false);
  expect(after).toHaveLength(1);
  expect(isRowWrite(after[0]!)).toBe(true);
});

test('a request with no credential or two of them is refused before any store call: its token counts nothing', async () => {
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm refusals ${i}`);
  const from = counter.calls.length;
  const refused: Array<Record<string, string>> = [
    { 'x-proxy-token': proxy.account.token },
    { authorization: `Bearer ${proxy.account.token}, Bearer ${proxy.account.token}` },
    { authorization: 'Bearer sk-callers-own-key-0123456789, Bearer another-key', 'x-proxy-token': proxy.account.token },
  ];
  for (const credentials of refused) {
    const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentials },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'refused' }] }),
    });
    expect(response.status).toBe(401);
    await response.text();
  }
  // The next request's own two calls (gate, row) are all the store has seen since.
  const { before, after } = await callsOf('stored', false, 'after the refusals');
  expect(counter.calls.slice(from)).toEqual([...before, ...after]);
  expect(before).toHaveLength(1);
});
