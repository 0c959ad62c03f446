/**
 * The rate limit's promises on the wall clock, across three instances of the proxy on one store,
 * on whatever load this machine carries (docs/errors-and-limits.md, "The rate limit"): a client
 * sending steadily at 95 % of its token's limit is never refused, and a client sending as fast as
 * it can never gets more than the limit admitted in any 60 seconds. Admissions are timed by the
 * instants the gate counted them at (each instance's real gate, observed).
 */
import type { TokenGate } from '../../lambda/auth/ports';
import { parseToken } from '../../lambda/auth/proxy-token';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { callProxy } from './support/requests';

jest.setTimeout(420_000);

const LIMIT = 60;
const MINUTE = 60_000;
let instances: InProcessProxy[] = [];
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
  const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT) };
  const first = await startInProcessProxy({ env });
  instances = [
    first,
    await startInProcessProxy({ env, sameStoreAs: first }),
    await startInProcessProxy({ env, sameStoreAs: first }),
  ];
  for (const instance of instances) instance.deps.tokenGate = observed(instance.deps.tokenGate);
});
afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close();
});

const tokenIdOf = (token: string) => parseToken(token)!.tokenId;

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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

// The two clients run at the same time, each with its own account and token: the wall clock is the cost.
test.concurrent(
  `a client at 95 % of a limit of ${LIMIT} a minute, round-robin over three instances for over two minutes, is never refused`,
  async () => {
    const token = await instances[0]!.createAccount('steady-95');
    const spacing = MINUTE / (LIMIT * 0.95);
    const statuses: number[] = [];
    const inFlight: Promise<void>[] = [];
    let lastSent = -Infinity;
    const start = Date.now();
    // Sent on a steady schedule without waiting for answers, and never closer together than the spacing (a late send does not catch up).
    for (let i = 0; Date.now() - start < 130_000; i++) {
      await sleep(Math.max(start + i * spacing, lastSent + spacing) - Date.now());
      lastSent = Date.now();
      inFlight.push(
        callProxy(instances[i % 3]!, { provider: 'prov-b', token, prompt: `steady ${i}` }).then((result) => {
          statuses.push(result.status);
        }),
      );
    }
    await Promise.all(inFlight);
    expect(statuses.length).toBeGreaterThan(120);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const times = admittedAt.get(tokenIdOf(token))!;
    expect(times).toHaveLength(statuses.length);
  },
);

test.concurrent(
  `a client sending as fast as it can over three instances gets at most ${LIMIT} admitted in any 60 s`,
  async () => {
    const token = await instances[0]!.createAccount('greedy');
    const statuses: number[] = [];
    const start = Date.now();
    // Six senders, two per instance, each sending its next request when the last is answered, for 75 s.
    await Promise.all(
      Array.from({ length: 6 }, async (_, sender) => {
        for (let i = 0; Date.now() - start < 75_000; i++) {
          const result = await callProxy(instances[sender % 3]!, { provider: 'prov-b', token, prompt: `greedy ${i}` });
          statuses.push(result.status);
        }
      }),
    );
    const times = admittedAt.get(tokenIdOf(token))!;
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(LIMIT);
    expect(statuses.filter((status) => status === 200)).toHaveLength(times.length);
    // The first minute's worth and then some, as the window slides.
    expect(times.length).toBeGreaterThan(LIMIT);
    expect(busiestMinute(times)).toBeLessThanOrEqual(LIMIT);
  },
);
