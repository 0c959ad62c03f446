import { backoffs, jitteredBackoff, retryPolicies, withRetries, type RetryPolicy } from '../../../lambda/base/retry';
import { sendUntilProcessed, UnprocessedError } from '../../../lambda/store/dynamodb/unprocessed';

/** Records the waits instead of sleeping, so no test depends on the clock. */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

class Retryable extends Error {}
class Fatal extends Error {}

function failing(times: number, error: () => Error = () => new Retryable()) {
  const attempts: number[] = [];
  const operation = async (attempt: number) => {
    attempts.push(attempt);
    if (attempts.length <= times) throw error();
    return 'done';
  };
  return { attempts, operation };
}

const policy = (attempts: number): RetryPolicy => ({
  attempts,
  mayRetry: (error) => error instanceof Retryable,
  delayMs: (retry) => retry * 10,
});

describe('withRetries', () => {
  it('returns the first success, numbering attempts from 1 and waiting the policy delay between them', async () => {
    const { waits, sleep } = recordingSleep();
    const { attempts, operation } = failing(2);
    await expect(withRetries(operation, policy(5), sleep)).resolves.toBe('done');
    expect(attempts).toEqual([1, 2, 3]);
    expect(waits).toEqual([10, 20]);
  });

  it('makes exactly `attempts` attempts, then throws the last error', async () => {
    const { waits, sleep } = recordingSleep();
    const { attempts, operation } = failing(10);
    await expect(withRetries(operation, policy(4), sleep)).rejects.toBeInstanceOf(Retryable);
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(waits).toEqual([10, 20, 30]);
  });

  it('stops at once on an error the policy does not retry', async () => {
    const { waits, sleep } = recordingSleep();
    const { attempts, operation } = failing(10, () => new Fatal());
    await expect(withRetries(operation, policy(4), sleep)).rejects.toBeInstanceOf(Fatal);
    expect(attempts).toEqual([1]);
    expect(waits).toEqual([]);
  });

  it('does not sleep for a zero delay', async () => {
    const { waits, sleep } = recordingSleep();
    const { attempts, operation } = failing(1);
    await withRetries(operation, { ...policy(2), delayMs: () => 0 }, sleep);
    expect(attempts).toEqual([1, 2]);
    expect(waits).toEqual([]);
  });
});

describe('jitteredBackoff', () => {
  const shape = { firstMs: 40, factor: 2, capMs: 300 };

  it('draws each wait within [0, min(cap, first × factor^(retry-1)))', () => {
    expect([1, 2, 3, 4, 5].map(jitteredBackoff(shape, () => 0))).toEqual([0, 0, 0, 0, 0]);
    expect([1, 2, 3, 4, 5].map(jitteredBackoff(shape, () => 0.5))).toEqual([20, 40, 80, 150, 150]);
    const nearlyOne = jitteredBackoff(shape, () => 0.999999);
    [40, 80, 160, 300, 300].forEach((ceiling, i) => {
      const wait = nearlyOne(i + 1);
      expect(wait).toBeLessThan(ceiling);
      expect(wait).toBeGreaterThan(ceiling * 0.99);
    });
  });

  it('with a floor share, never waits less than that share of the ceiling', () => {
    const equal = { ...shape, floorShare: 0.5 };
    expect([1, 2, 3, 4].map(jitteredBackoff(equal, () => 0))).toEqual([20, 40, 80, 150]);
    expect([1, 2, 3, 4].map(jitteredBackoff(equal, () => 0.5))).toEqual([30, 60, 120, 225]);
  });

  it('spreads waits with the real random source, always within the bounds', () => {
    const delay = jitteredBackoff(shape);
    const samples = Array.from({ length: 200 }, () => delay(3));
    for (const wait of samples) {
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThan(160);
    }
    expect(new Set(samples).size).toBeGreaterThan(100);
  });
});

describe('retryPolicies', () => {
  /** Runs the policy against an operation that always fails with `error`; returns attempts and waits. */
  async function exhaust(named: RetryPolicy, error: unknown) {
    const { waits, sleep } = recordingSleep();
    let attempts = 0;
    await withRetries(
      async () => {
        attempts++;
        throw error;
      },
      named,
      sleep,
    ).catch(() => undefined);
    return { attempts, waits };
  }

  function ceilings(shape: { firstMs: number; factor: number; capMs: number }, retries: number) {
    return Array.from({ length: retries }, (_, i) => Math.min(shape.capMs, shape.firstMs * shape.factor ** i));
  }

  function expectWithin(waits: number[], bounds: number[], floorShare = 0) {
    expect(waits).toHaveLength(bounds.length);
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(bounds[i]! * floorShare);
      expect(wait).toBeLessThan(bounds[i]!);
    });
  }

  it('storeCall: 3 attempts, jittered waits under 50 and 100 ms, only errors its classifier allows', async () => {
    const retried = await exhaust(
      retryPolicies.storeCall(() => true),
      new Error('throttled'),
    );
    expect(retried.attempts).toBe(3);
    expect(ceilings(backoffs.storeCall, 2)).toEqual([50, 100]);
    expectWithin(retried.waits, [50, 100]);
    // A sent-at-most-once command whose answer was lost: its classifier refuses, so it is sent once only.
    expect(
      (
        await exhaust(
          retryPolicies.storeCall(() => false),
          new Error('socket hang up'),
        )
      ).attempts,
    ).toBe(1);
  });

  it('unprocessedItems: 6 attempts (5 retries) under ceilings of 40 ms doubling, or the attempts the caller gives', async () => {
    const retried = await exhaust(
      retryPolicies.unprocessedItems(() => true),
      new Error('left over'),
    );
    expect(retried.attempts).toBe(6);
    expectWithin(retried.waits, [40, 80, 160, 320, 640]);
    expect(
      (
        await exhaust(
          retryPolicies.unprocessedItems(() => true, 5),
          new Error('left over'),
        )
      ).attempts,
    ).toBe(5);
  });

  it('rowWrite: 6 attempts retrying every error, jittered waits capped at 5 s, 6 to 12 s in all', async () => {
    const retried = await exhaust(retryPolicies.rowWrite(), new TypeError('anything'));
    expect(retried.attempts).toBe(6);
    expectWithin(retried.waits, [100, 400, 1_600, 5_000, 5_000], 0.5);
    const total = retried.waits.reduce((sum, wait) => sum + wait, 0);
    expect(total).toBeGreaterThanOrEqual(6_050);
    expect(total).toBeLessThan(12_100);
  });

  it('staleUpstreamSocket: one more attempt, at once, only for a stale socket', async () => {
    const stale = await exhaust(
      retryPolicies.staleUpstreamSocket(() => true),
      new Error('ECONNRESET'),
    );
    expect(stale).toEqual({ attempts: 2, waits: [] });
    expect(
      (
        await exhaust(
          retryPolicies.staleUpstreamSocket(() => false),
          new Error('refused'),
        )
      ).attempts,
    ).toBe(1);
  });
});

describe('sendUntilProcessed (BatchGet/BatchWrite leftovers)', () => {
  it('sends only what was left over until nothing is', async () => {
    const sent: number[][] = [];
    await sendUntilProcessed([1, 2, 3, 4], 'writes', async (pending) => {
      sent.push(pending);
      return pending.slice(2);
    });
    expect(sent).toEqual([
      [1, 2, 3, 4],
      [3, 4],
    ]);
  });

  it('gives up after the policy’s attempts with how many were left', async () => {
    let calls = 0;
    const stuck = sendUntilProcessed(
      [1, 2],
      'reads',
      async (pending) => {
        calls++;
        return pending;
      },
      3,
    );
    await expect(stuck).rejects.toThrow(new UnprocessedError(2, 'reads').message);
    expect(calls).toBe(3);
  });

  it('does not retry an error of the call itself (the client already did)', async () => {
    let calls = 0;
    const failed = sendUntilProcessed([1], 'writes', async () => {
      calls++;
      throw new Error('ValidationException');
    });
    await expect(failed).rejects.toThrow('ValidationException');
    expect(calls).toBe(1);
  });
});

test('an alert is tried 24 times, its last attempt 2.4 to 4.8 hours after the first, no wait over SQS’s 15 minutes; the first wait scales the rest', () => {
  for (const draw of [0, 0.999999]) {
    const random = jest.spyOn(Math, 'random').mockReturnValue(draw);
    try {
      const policy = retryPolicies.alertDelivery(() => true);
      const waits = Array.from({ length: policy.attempts - 1 }, (_, i) => policy.delayMs(i + 1));
      expect(policy.attempts).toBe(24);
      expect(Math.max(...waits)).toBeLessThanOrEqual(900_000);
      const hours = waits.reduce((a, b) => a + b, 0) / 3_600_000;
      expect(hours).toBeGreaterThanOrEqual(2.35);
      expect(hours).toBeLessThanOrEqual(4.8);
    } finally {
      random.mockRestore();
    }
  }
  const random = jest.spyOn(Math, 'random').mockReturnValue(0.999999);
  try {
    const quick = retryPolicies.alertDelivery(() => true, 1_000);
    expect(Math.round(quick.delayMs(1))).toBe(1_000);
    expect(Math.round(quick.delayMs(23))).toBe(30_000);
  } finally {
    random.mockRestore();
  }
});
