/** The error types AWS answers with when a request's signing time is too far from its own clock. */
const CLOCK_SKEW_ERRORS = new Set([
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'RequestExpired',
  'RequestInTheFuture',
  'RequestTimeTooSkewed',
  'AuthFailure',
]);
/** AWS refuses a signature made more than 5 minutes away from its own time. */
const TOLERANCE_MS = 5 * 60_000;

/**
 * The time to sign with: the local clock, corrected by the offset learnt from
 * the `Date` header of an answer that refused a signature's time. A machine
 * whose clock drifted (a laptop after sleep, a container without NTP) then
 * re-signs and succeeds instead of failing every call, as the AWS SDK does.
 */
export class ServerClock {
  private offsetMs = 0;

  constructor(private readonly localNow: () => number = Date.now) {}

  now(): Date {
    return new Date(this.localNow() + this.offsetMs);
  }

  /**
   * Learns from a refused request's answer. Returns true when the refusal was
   * about the signing time and the offset changed, so a request re-signed now
   * would be accepted: the caller may send it again.
   */
  correctFrom(errorType: string, dateHeader: string | undefined): boolean {
    if (!CLOCK_SKEW_ERRORS.has(errorType) || !dateHeader) return false;
    const serverTime = Date.parse(dateHeader);
    if (Number.isNaN(serverTime)) return false;
    const localNow = this.localNow();
    if (Math.abs(serverTime - (localNow + this.offsetMs)) < TOLERANCE_MS) return false;
    this.offsetMs = serverTime - localNow;
    return true;
  }
}
