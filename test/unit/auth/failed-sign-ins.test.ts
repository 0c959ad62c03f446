import {
  CHECKS_PER_MINUTE,
  FailedSignIns,
  FREE_FAILURES,
  MAX_DELAY_MS,
  MAX_PASSED,
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

  describe('the throttle', () => {
    const source = '203.0.113.9';
    const checked = (admitted: ReturnType<FailedSignIns['admit']>) => {
      if ('retryAfterSeconds' in admitted) throw new Error(`refused for ${admitted.retryAfterSeconds} s`);
      return admitted;
    };

    it('counts distinct credentials being checked: of many guesses sent at once, only the allowance is checked', () => {
      const signIns = new FailedSignIns(() => 0);
      const answers = Array.from({ length: 50 }, (_, i) => signIns.admit(source, `guess-${i}`));
      expect(answers.filter((answer) => 'done' in answer)).toHaveLength(CHECKS_PER_MINUTE);
      expect(answers.at(-1)).toEqual({ retryAfterSeconds: 6 });
    });

    it('one client sending its one credential many times at once counts once', () => {
      const signIns = new FailedSignIns(() => 0);
      const checks = Array.from({ length: 500 }, () => checked(signIns.admit(source, 'the-real-key')));
      expect(checks).toHaveLength(500);
      checks.forEach((check) => check.done());
    });

    it('a correct credential frees its check; a wrong one uses it up, refilled at the allowance per minute', () => {
      let now = 0;
      const signIns = new FailedSignIns(() => now);
      for (let i = 0; i < 100; i++) checked(signIns.admit(source, `right-${i}`)).done();
      for (let i = 0; i < CHECKS_PER_MINUTE; i++) {
        checked(signIns.admit(source, `wrong-${i}`)).done();
        signIns.failed(source);
      }
      // Refused unchecked, right or wrong; other addresses are not affected.
      expect(signIns.admit(source, 'wrong-again')).toEqual({ retryAfterSeconds: 6 });
      expect(signIns.admit(source, 'right-0')).toEqual({ retryAfterSeconds: 6 });
      expect('done' in signIns.admit('198.51.100.7', 'wrong-0')).toBe(true);
      now += 60_000 / CHECKS_PER_MINUTE;
      checked(signIns.admit(source, 'one-more')).done();
      signIns.failed(source);
      expect('retryAfterSeconds' in signIns.admit(source, 'and-another')).toBe(true);
    });

    it('credentials that passed are neither counted nor refused: many callers behind one address, each with its own', () => {
      const signIns = new FailedSignIns(() => 0);
      const tokens = Array.from({ length: 32 }, (_, i) => `token-${i}`);
      // Their first uses, a few at a time, pass.
      for (const token of tokens) checked(signIns.admit(source, token)).done(true);
      // Then all at once, twice over: none is refused, and guesses still find only the allowance.
      const checks = [...tokens, ...tokens].map((token) => checked(signIns.admit(source, token)));
      const guesses = Array.from({ length: 50 }, (_, i) => signIns.admit(source, `guess-${i}`));
      expect(guesses.filter((answer) => 'done' in answer)).toHaveLength(CHECKS_PER_MINUTE);
      for (const check of checks) check.done(true);
      // With the address's allowance used up by wrong guesses, a credential that passed is still checked.
      for (let i = 0; i < CHECKS_PER_MINUTE; i++) signIns.failed(source);
      expect('retryAfterSeconds' in signIns.admit(source, 'guess-new')).toBe(true);
      expect('done' in signIns.admit(source, 'token-0')).toBe(true);
    });

    it('a credential that no longer passes (revoked) is counted again; at most MAX_PASSED are remembered', () => {
      const signIns = new FailedSignIns(() => 0, undefined, 1);
      checked(signIns.admit(source, 'revoked-later')).done(true);
      checked(signIns.admit(source, 'revoked-later')).done(false);
      const held = checked(signIns.admit(source, 'other'));
      expect('retryAfterSeconds' in signIns.admit(source, 'revoked-later')).toBe(true);
      held.done(true);
      // Past MAX_PASSED, the least recently used is forgotten first.
      const many = new FailedSignIns(() => 0, undefined, 1);
      for (let i = 0; i <= MAX_PASSED; i++) checked(many.admit(`192.0.2.${i % 200}`, `t-${i}`)).done(true);
      const busy = checked(many.admit(source, 'unknown'));
      expect('done' in many.admit(source, `t-${MAX_PASSED}`)).toBe(true);
      expect('retryAfterSeconds' in many.admit(source, 't-0')).toBe(true);
      busy.done();
    });

    it('done twice frees one check only', () => {
      const signIns = new FailedSignIns(() => 0, undefined, 2);
      const first = checked(signIns.admit(source, 'a'));
      checked(signIns.admit(source, 'a'));
      checked(signIns.admit(source, 'b'));
      first.done();
      first.done();
      // "a" is still being checked once, "b" once: a third credential finds no room.
      expect('retryAfterSeconds' in signIns.admit(source, 'c')).toBe(true);
    });

    it('a limit of 0 checks every credential', () => {
      const signIns = new FailedSignIns(() => 0, 0, 0);
      for (let i = 0; i < 100; i++) signIns.failed(source);
      expect('done' in signIns.admit(source, 'any')).toBe(true);
    });
  });
});
