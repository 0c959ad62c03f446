import {
  FailedSignIns,
  FREE_FAILURES,
  MAX_DELAY_MS,
  MAX_SOURCES,
  WINDOW_MS,
} from '../../../lambda/auth/failed-sign-ins';

describe('FailedSignIns', () => {
  it('holds nothing for the first few failures, then doubles the hold up to a short maximum', () => {
    const signIns = new FailedSignIns(() => 0);
    const delays = Array.from({ length: FREE_FAILURES + 8 }, () => signIns.failed('203.0.113.9').delayMs);
    expect(delays.slice(0, FREE_FAILURES)).toEqual(Array(FREE_FAILURES).fill(0));
    expect(delays.slice(FREE_FAILURES)).toEqual([100, 200, 400, 800, 1600, MAX_DELAY_MS, MAX_DELAY_MS, MAX_DELAY_MS]);
  });

  it('a longest hold of 0 holds nothing, however many failures; a lower one caps the doubling', () => {
    const unheld = new FailedSignIns(() => 0, 0);
    const capped = new FailedSignIns(() => 0, 300);
    const delays = (signIns: FailedSignIns) =>
      Array.from({ length: FREE_FAILURES + 4 }, () => signIns.failed('203.0.113.9').delayMs).slice(FREE_FAILURES);
    expect(delays(unheld)).toEqual([0, 0, 0, 0]);
    expect(delays(capped)).toEqual([100, 200, 300, 300]);
  });

  it('counts each source apart', () => {
    const signIns = new FailedSignIns(() => 0);
    for (let i = 0; i < 20; i++) signIns.failed('203.0.113.9');
    expect(signIns.failed('198.51.100.7')).toEqual({ failures: 1, delayMs: 0 });
  });

  it('forgets a source that has been quiet for the window', () => {
    let now = 0;
    const signIns = new FailedSignIns(() => now);
    for (let i = 0; i < 20; i++) signIns.failed('203.0.113.9');
    now += WINDOW_MS;
    expect(signIns.failed('203.0.113.9')).toEqual({ failures: 1, delayMs: 0 });
  });

  it('remembers at most MAX_SOURCES addresses, forgetting the least recently failing first', () => {
    const signIns = new FailedSignIns(() => 0);
    for (let i = 0; i < 10; i++) signIns.failed('busy');
    for (let i = 0; i < MAX_SOURCES + 500; i++) {
      signIns.failed(`10.0.${i >> 8}.${i & 255}`);
      if (i % 1000 === 0) signIns.failed('busy');
    }
    expect(signIns.size).toBe(MAX_SOURCES);
    // The first addresses are gone; the one that kept failing is still counted.
    expect(signIns.failed('10.0.0.1').failures).toBe(1);
    expect(signIns.failed('busy').failures).toBeGreaterThan(10);
  });
});
