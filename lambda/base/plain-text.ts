/**
 * What text the proxy accepts where it keeps or shows it (a model id, a requester label, a budget's
 * subject) and what it can send in an HTTP header (a provider key): checked at the edge, so nothing
 * else has to wonder (SECURITY.md, "Hostile input").
 */

/**
 * Characters that change how text is shown rather than what it says: C0 controls, DEL, C1
 * controls, the line and paragraph separators, the bidirectional marks, embeddings, overrides and
 * isolates, the byte-order mark, and U+FFFD (what bytes that were no UTF-8 became).
 */
const UNSAFE_CHARACTER =
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/;

/** `U+202E`: the first character of `text` that a label may not hold, or undefined. */
export function unsafeCharacterIn(text: string): string | undefined {
  const found = UNSAFE_CHARACTER.exec(text)?.[0];
  return found === undefined ? undefined : `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

const UNSAFE_CHARACTERS = new RegExp(UNSAFE_CHARACTER.source, 'g');

/** `text` with each character a label may not hold written out as `\uXXXX`, so a message can quote it. */
export function withUnsafeEscaped(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Visible ASCII only: what an HTTP header carries unchanged (no space, CR, LF, NUL or non-ASCII character). */
const SENDABLE_CREDENTIAL = /^[\x21-\x7e]+$/;

/** Whether a credential can be sent upstream in a header as it is. */
export function isSendableCredential(value: string): boolean {
  return SENDABLE_CREDENTIAL.test(value);
}
