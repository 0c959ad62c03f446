/**
 * The sliding minute through the proxy, as a client meets it (docs/errors-and-limits.md, "The
 * rate limit"), on the proxy's own injectable clock: 100 requests at :57 and 100 more at :01 of
 * the next clock minute are 100 admitted and 100 refused with 429 and `Retry-After: 60`; the
 * `x-proxy-ratelimit-*` headers count the window that ends at each request, and the reset they announce
 * is when room grows again.
 */
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { BUCKET_MS, bucketOf, WINDOW_BUCKETS } from '../../lambda/auth/sliding-minute';

const MINUTE = 60_000;
const AT_57 = Math.floor(Date.now() / MINUTE) * MINUTE - 3 * MINUTE + 57_000;
/** When the 1.5-second bucket of :57 leaves the window (docs/errors-and-limits.md). */
const LEAVES = (bucketOf(AT_57) + WINDOW_BUCKETS + 1) * BUCKET_MS;
let clock = AT_57;
let local: InProcessProxy;

beforeAll(async () => {
  local = await startInProcessProxy({ now: () => clock });
});
afterAll(() => local?.close());

async function send(token: string): Promise<{ status: number; headers: Headers }> {
  const response = await fetch(`${local.proxyBase}/prov-e/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await response.arrayBuffer();
  return { status: response.status, headers: response.headers };
}

test('a minute boundary does not reset the count: 200 requests within 5 s admit 100', async () => {
  const token = await local.createAccount('sliding');
  for (let i = 0; i < 100; i++) {
    clock = AT_57 + i * 10;
    const answer = await send(token);
    expect({ i, status: answer.status, remaining: answer.headers.get('x-proxy-ratelimit-remaining') }).toEqual({
      i,
      status: 200,
      remaining: String(99 - i),
    });
    expect(answer.headers.get('x-proxy-ratelimit-limit')).toBe('100');
    // Room grows again when the bucket of the first of them leaves the window.
    expect(answer.headers.get('x-proxy-ratelimit-reset')).toBe(String(Math.ceil(LEAVES / 1000)));
  }
  for (let i = 0; i < 100; i++) {
    clock = AT_57 + 4_000 + i * 10;
    const answer = await send(token);
    expect({ i, status: answer.status }).toEqual({ i, status: 429 });
    expect(answer.headers.get('retry-after')).toBe('60');
    expect(answer.headers.get('x-proxy-ratelimit-remaining')).toBe('0');
  }
  // Not a moment before the announced reset; at it, the first hundred have left the window together.
  clock = LEAVES - 1;
  expect((await send(token)).status).toBe(429);
  clock = LEAVES;
  for (let i = 0; i < 100; i++) expect({ i, status: (await send(token)).status }).toEqual({ i, status: 200 });
  expect((await send(token)).status).toBe(429);
});

test('Retry-After: 60 as a client meets it: a 429, then the same request 60 s later is admitted', async () => {
  const token = await local.createAccount('retry-after');
  const at = AT_57 + 2 * MINUTE;
  for (let i = 0; i < 100; i++) {
    clock = at + i * 10;
    expect({ i, status: (await send(token)).status }).toEqual({ i, status: 200 });
  }
  // In the same 1.5-second bucket as the hundred: without the refusal closing it, they would count until it leaves (at + 61.5 s).
  clock = at + 1_200;
  const refused = await send(token);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('60');
  expect(refused.headers.get('x-proxy-ratelimit-reset')).toBe(String(Math.ceil((clock + MINUTE) / 1000)));
  const refusedAt = clock;
  clock = refusedAt + MINUTE - 1;
  expect((await send(token)).status).toBe(429);
  clock = refusedAt + MINUTE;
  expect((await send(token)).status).toBe(200);
});
