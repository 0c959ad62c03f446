/**
 * A `Retry-After` header (RFC 9110 10.2.3) in ms from now: delay-seconds or an HTTP date.
 * Undefined when absent or unreadable; a date in the past is 0.
 */
export function retryAfterMs(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
