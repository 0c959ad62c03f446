/**
 * Edits one member of a JSON object's text without re-serialising the rest, so
 * every other byte reaches the provider as the client wrote it: numbers such as
 * `9007199254740993` or `1.0` keep their literal form (a parse/stringify round
 * trip would turn them into `9007199254740992` and `1`), and key order,
 * spacing and escapes stay as sent.
 *
 * The scanner works on bytes: every structural character of JSON is ASCII and
 * no byte of a multi-byte UTF-8 character is below 0x80, so offsets are exact
 * whatever the text contains.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface MemberSpan {
  key: string;
  /** Byte offset of the member's key (its opening quote). */
  keyStart: number;
  /** Byte offsets of the member's value: `[valueStart, valueEnd)`. */
  valueStart: number;
  valueEnd: number;
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(bytes: Buffer, at: number): number {
  while (at < bytes.length && isSpace(bytes[at])) at++;
  return at;
}

/** The offset just past the string that starts at `at` (a quote). */
function stringEnd(bytes: Buffer, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    if (bytes[i] === BACKSLASH) i++;
    else if (bytes[i] === QUOTE) return i + 1;
  }
  throw new Error('unterminated string');
}

/** The offset just past the value that starts at `at`. */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < bytes.length; i++) {
      const byte = bytes[i];
      if (byte === QUOTE) i = stringEnd(bytes, i) - 1;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    throw new Error('unterminated value');
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  while (
    i < bytes.length &&
    !isSpace(bytes[i]) &&
    bytes[i] !== COMMA &&
    bytes[i] !== CLOSE_BRACE &&
    bytes[i] !== CLOSE_BRACKET
  )
    i++;
  return i;
}

/** The members of the object whose `{` is at `open`, with their value spans. */
export function objectMembers(bytes: Buffer, open: number): MemberSpan[] {
  if (bytes[open] !== OPEN_BRACE) throw new Error('not an object');
  const members: MemberSpan[] = [];
  let at = skipSpace(bytes, open + 1);
  if (bytes[at] === CLOSE_BRACE) return members;
  for (;;) {
    if (bytes[at] !== QUOTE) throw new Error('expected a key');
    const keyStart = at;
    const keyEnd = stringEnd(bytes, at);
    const key = JSON.parse(bytes.toString('utf8', at, keyEnd)) as string;
    at = skipSpace(bytes, keyEnd);
    if (bytes[at] !== COLON) throw new Error('expected a colon');
    const valueStart = skipSpace(bytes, at + 1);
    const end = valueEnd(bytes, valueStart);
    members.push({ key, keyStart, valueStart, valueEnd: end });
    at = skipSpace(bytes, end);
    if (bytes[at] === COMMA) at = skipSpace(bytes, at + 1);
    else if (bytes[at] === CLOSE_BRACE) return members;
    else throw new Error('expected a comma or a closing brace');
  }
}

/**
 * The member `key` of the object whose `{` is at `open`: the last, when the key appears twice (the
 * one JSON parsers keep, and so the one an edit must change).
 */
function lastMember(bytes: Buffer, open: number, key: string): MemberSpan | undefined {
  return objectMembers(bytes, open).findLast((m) => m.key === key);
}

/**
 * Sets `object[key][inner] = json` in the text of a top-level object, touching
 * only those bytes: `key` is added when absent, replaced when it is not an
 * object, and `inner` is added to or replaced inside it otherwise. When a key
 * appears twice, the last one is edited (the one JSON parsers keep).
 */
export function setNestedMember(bytes: Buffer, key: string, inner: string, json: string): Buffer {
  const open = skipSpace(bytes, 0);
  const member = lastMember(bytes, open, key);
  const pair = `${JSON.stringify(inner)}:${json}`;
  if (!member)
    return splice(bytes, open + 1, open + 1, `${JSON.stringify(key)}:{${pair}}${hasMembers(bytes, open) ? ',' : ''}`);
  if (bytes[member.valueStart] !== OPEN_BRACE) return splice(bytes, member.valueStart, member.valueEnd, `{${pair}}`);
  const existing = lastMember(bytes, member.valueStart, inner);
  if (existing) return splice(bytes, existing.valueStart, existing.valueEnd, json);
  const innerOpen = member.valueStart;
  return splice(bytes, innerOpen + 1, innerOpen + 1, `${pair}${hasMembers(bytes, innerOpen) ? ',' : ''}`);
}

/**
 * The text of a top-level object without its `key` member (every one, if it appears twice), the
 * comma that joined it going with it; every other byte stays as written.
 */
export function withoutMember(bytes: Buffer, key: string): Buffer {
  const open = skipSpace(bytes, 0);
  for (;;) {
    const members = objectMembers(bytes, open);
    const at = members.findIndex((member) => member.key === key);
    if (at < 0) return bytes;
    const member = members[at];
    const next = members[at + 1];
    const previous = members[at - 1];
    // Up to the next member's key; the last one takes the comma after the member before it.
    if (next) bytes = splice(bytes, member.keyStart, next.keyStart, '');
    else if (previous) bytes = splice(bytes, previous.valueEnd, member.valueEnd, '');
    else bytes = splice(bytes, member.keyStart, member.valueEnd, '');
  }
}

function hasMembers(bytes: Buffer, open: number): boolean {
  return bytes[skipSpace(bytes, open + 1)] !== CLOSE_BRACE;
}

function splice(bytes: Buffer, from: number, to: number, text: string): Buffer {
  return Buffer.concat([bytes.subarray(0, from), Buffer.from(text, 'utf8'), bytes.subarray(to)]);
}

/**
 * Sets `object[key] = json` in the text of a top-level object, touching only those bytes: added when
 * absent, replaced otherwise (the last one, when a key appears twice).
 */
export function setMember(bytes: Buffer, key: string, json: string): Buffer {
  const open = skipSpace(bytes, 0);
  const member = lastMember(bytes, open, key);
  if (member) return splice(bytes, member.valueStart, member.valueEnd, json);
  return splice(bytes, open + 1, open + 1, `${JSON.stringify(key)}:${json}${hasMembers(bytes, open) ? ',' : ''}`);
}

/** Appends `json` to the array `object[key]` of a top-level object; every other byte stays as written. */
export function appendToArrayMember(bytes: Buffer, key: string, json: string): Buffer {
  const open = skipSpace(bytes, 0);
  const member = lastMember(bytes, open, key);
  if (!member || bytes[member.valueStart] !== OPEN_BRACKET) throw new Error(`no array ${key}`);
  const close = member.valueEnd - 1;
  const empty = skipSpace(bytes, member.valueStart + 1) === close;
  return splice(bytes, close, close, `${empty ? '' : ','}${json}`);
}
