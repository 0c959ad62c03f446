/**
 * The rate limit's promises across three instances of the proxy on one store (docs/errors-and-limits.md,
 * "The rate limit"): a client sending steadily at 95 % of its token's limit is never refused, even
 * with requests reaching the store out of step, and a client sending as fast as it can never gets
 * more than the limit admitted in any 60 seconds. Admissions are timed by the instants the gate
 * counted them at (each instance's real gate, observed).
 *
 * Each instance's clock is held by the test (the composition root's `now`), so minutes pass without
 * waiting them out. What the wall clock used to supply is made on purpose: the steady client's
 * requests reach the store out of step (each pair sent later-stamped first), and the greedy one's six
 * senders race on the shared gate items, their stamps advancing with every request sent. The request
 * counts are what the promises need: over two minutes of the steady schedule, and past the limit,
 * the first window and its sliding for the greedy one.
 */
import type { TokenGate } from '../../lambda/auth/ports';
import { parseToken } from '../../lambda/auth/proxy-token';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { callProxy } from './support/requests';

const LIMIT = 60;
const MINUTE = 60_000;
let instances: InProcessProxy[] = [];
/** Each instance's clock (epoch ms), set by the test before each request it sends there; never moved back. */
const clocks = [0, 0, 0];
/** Per proxy token id, the instants its admitted requests were counted at. */
const admittedAt = new Map<string, number[]>();

/** Notes what each instance's own gate decided, then answers as it did. */
function observed(gate: TokenGate): TokenGate {
  return {
    async admit(token, now) {
      const verdict = await gate.admit(token, now);
      if (verdict.kind === 'admitted') admittedAt.set(token.tokenId, [...(admittedAt.get(token.tokenId) ?? []), now]);
      return verdict;
    },
  };
}

beforeAll(async () => {
  clocks.fill(Date.now());
  const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT) };
  const first = await startInProcessProxy({ env, now: () => clocks[0]! });
  instances = [
    first,
    await startInProcessProxy({ env, now: () => clocks[1]!, sameStoreAs: first }),
    await startInProcessProxy({ env, now: () => clocks[2]!, sameStoreAs: first }),
  ];
  for (const instance of instances) instance.deps.tokenGate = observed(instance.deps.tokenGate);
});
afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close();
});

const tokenIdOf = (token: string) => parseToken(token)!.tokenId;
const latest = () => Math.max(...clocks);

/** Sends one request to an instance whose clock reads `at` (or later, if it already does). */
function sendAt(instance: number, at: number, token: string, prompt: string) {
  clocks[instance] = Math.max(clocks[instance]!, at);
  return callProxy(instances[instance]!, { provider: 'prov-b', token, prompt });
}

/** The largest number of admissions inside any 60-second span. */
function busiestMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= MINUTE) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

test(`a client at 95 % of a limit of ${LIMIT} a minute, round-robin over three instances for over two minutes, is never refused`, async () => {
  const token = await instances[0]!.createAccount('steady-95');
  const spacing = MINUTE / (LIMIT * 0.95);
  const start = latest() + MINUTE;
  const count = Math.ceil(130_000 / spacing);
  const statuses: number[] = [];
  // In pairs, the later-stamped request first and answered before the earlier one is sent: every
  // other request reaches the store one spacing (1.05 s) after a request stamped after it.
  for (let i = 0; i < count; i += 2) {
    for (const j of [i + 1, i].filter((n) => n < count))
      statuses.push((await sendAt(j % 3, start + j * spacing, token, `steady ${j}`)).status);
  }
  expect(statuses.length).toBeGreaterThan(120);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  const times = admittedAt.get(tokenIdOf(token))!;
  expect(times).toHaveLength(statuses.length);
  expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(2 * MINUTE);
});

test(`a client sending as fast as it can over three instances gets at most ${LIMIT} admitted in any 60 s`, async () => {
  const token = await instances[0]!.createAccount('greedy');
  const statuses: number[] = [];
  // Each request sent is stamped 250 ms after the one before: 90 s are 360 requests, six times the
  // limit. The first 60 are admitted within 15 s; the refusals that follow close their buckets, which
  // stop counting 60 s later (the window slides on a closed bucket, as it did in a minute of real time).
  const step = 250;
  const start = latest() + MINUTE;
  let sent = 0;
  // Six senders, two per instance, each sending its next request when the last is answered.
  await Promise.all(
    Array.from({ length: 6 }, async (_, sender) => {
      while (sent * step < 90_000) {
        const at = start + sent++ * step;
        statuses.push((await sendAt(sender % 3, at, token, `greedy ${sent}`)).status);
      }
    }),
  );
  const times = admittedAt.get(tokenIdOf(token))!;
  expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(LIMIT);
  expect(statuses.filter((status) => status === 200)).toHaveLength(times.length);
  // The first minute's worth and then some, as the window slides.
  expect(times.length).toBeGreaterThan(LIMIT);
  expect(busiestMinute(times)).toBeLessThanOrEqual(LIMIT);
});
