/** Shorter values are not redacted: they would match ordinary text (real keys and tokens are far longer). */
export const MIN_SECRET_LENGTH = 8;
/** What stands where a credential was, in bytes, text and headers alike. */
export const REDACTED = '[redacted]';
const REPLACEMENT = Buffer.from(REDACTED);
/** Nothing held back (shared: a carry is only read, never written to). */
const EMPTY = Buffer.alloc(0);

const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const LETTER_U = 0x75;
/** `\uXXXX`: the longest JSON spelling of one character of a credential (which is ASCII). */
const ESCAPE_LENGTH = 6;

/**
 * Replaces every credential of a request in a byte stream, chunk by chunk,
 * holding back only a tail that could still become a secret with the next
 * chunk: memory stays bounded by the longest secret, and a stream whose chunks
 * end in ordinary text (an event's blank line) is passed on without delay.
 *
 * A credential is found as written and in any JSON spelling a client's parser turns back into
 * it: each character may be a `\uXXXX` escape (either case of hex digits), a `/` may be `\/`.
 * The plain spelling is found by `indexOf`; the escaped ones are looked for only where a
 * backslash is near, so text without one costs nothing more.
 */
export class SecretRedactor {
  private readonly secrets: Buffer[];
  private readonly longest: number;
  private carry: Buffer = EMPTY;

  constructor(secrets: Iterable<string | undefined>) {
    // Longest first: where two secrets start at the same byte (a token and its secret part), the whole one is replaced.
    this.secrets = searchableSecrets(secrets).map((secret) => Buffer.from(secret, 'utf8'));
    this.longest = this.secrets[0]?.length ?? 0;
  }

  /** Whether there is anything to redact at all. */
  get active(): boolean {
    return this.longest > 0;
  }

  /** The redacted bytes that are safe to pass on now (possibly empty). */
  write(chunk: Buffer): Buffer {
    if (!this.active) return chunk;
    const input = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const out: Buffer[] = [];
    let from = 0;
    for (;;) {
      const match = this.nextMatch(input, from);
      if (!match) break;
      out.push(input.subarray(from, match.at), REPLACEMENT);
      from = match.at + match.length;
    }
    // Every match starting before `keepFrom` lies wholly inside `input` and was found above.
    const keepFrom = Math.min(this.startOfPossibleSecret(input, from), this.startOfPossibleEscaped(input, from));
    out.push(input.subarray(from, keepFrom));
    this.carry = keepFrom < input.length ? Buffer.from(input.subarray(keepFrom)) : EMPTY;
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** What was held back, once the stream has ended: it can no longer become a secret. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = EMPTY;
    return rest;
  }

  private nextMatch(input: Buffer, from: number): { at: number; length: number } | undefined {
    let best: { at: number; length: number } | undefined;
    for (const secret of this.secrets) {
      const at = input.indexOf(secret, from);
      if (at >= 0 && (!best || at < best.at)) best = { at, length: secret.length };
    }
    // An escaped spelling holds a backslash within its first `longest` bytes: only starts that near one are tried.
    let tried = from;
    for (let slash = input.indexOf(BACKSLASH, from); slash >= 0; slash = input.indexOf(BACKSLASH, slash + 1)) {
      const start = Math.max(tried, slash - this.longest + 1);
      if (best && start >= best.at) break;
      for (let at = start; at <= slash && (!best || at < best.at); at++) {
        for (const secret of this.secrets) {
          const length = escapedMatchAt(input, at, secret);
          if (typeof length === 'number') {
            best = { at, length };
            break;
          }
        }
      }
      tried = slash + 1;
    }
    return best;
  }

  /**
   * The first index from which the rest of `input` is the beginning of some secret (else `input.length`).
   * Runs on every chunk of every answer: it compares in place, allocating nothing.
   */
  private startOfPossibleSecret(input: Buffer, from: number): number {
    for (let start = Math.max(from, input.length - this.longest + 1); start < input.length; start++) {
      const restLength = input.length - start;
      for (const secret of this.secrets) {
        if (
          secret[0] === input[start] &&
          secret.length > restLength &&
          secret.compare(input, start, input.length, 0, restLength) === 0
        )
          return start;
      }
    }
    return input.length;
  }

  /** The same for escaped spellings: only where the tail holds a backslash. */
  private startOfPossibleEscaped(input: Buffer, from: number): number {
    const window = Math.max(from, input.length - this.longest * ESCAPE_LENGTH);
    if (input.indexOf(BACKSLASH, window) < 0) return input.length;
    for (let start = window; start < input.length; start++) {
      if (this.secrets.some((secret) => escapedMatchAt(input, start, secret) === 'partial')) return start;
    }
    return input.length;
  }
}

/**
 * How `input` from `at` spells `secret` with JSON escapes allowed: the length of a whole spelling,
 * `partial` when `input` ends inside one, undefined when it is none.
 */
function escapedMatchAt(input: Buffer, at: number, secret: Buffer): number | 'partial' | undefined {
  let i = at;
  for (const want of secret) {
    if (i >= input.length) return 'partial';
    if (input[i] === want) {
      i++;
      continue;
    }
    if (input[i] !== BACKSLASH) return undefined;
    if (i + 1 >= input.length) return 'partial';
    if (input[i + 1] === SLASH && want === SLASH) {
      i += 2;
      continue;
    }
    if (input[i + 1] !== LETTER_U) return undefined;
    const hex = input.toString('latin1', i + 2, Math.min(i + ESCAPE_LENGTH, input.length));
    if (!/^[0-9a-fA-F]*$/.test(hex)) return undefined;
    if (hex.length < 4) return 'partial';
    if (parseInt(hex, 16) !== want) return undefined;
    i += ESCAPE_LENGTH;
  }
  return i - at;
}

/** The credentials worth searching for: long enough, each once, longest first (a token before its secret part). */
export function searchableSecrets(secrets: Iterable<string | undefined>): string[] {
  const unique = new Set(
    [...secrets].filter((secret): secret is string => typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH),
  );
  return [...unique].sort((a, b) => b.length - a.length);
}

/** What marks a quote cut short (a tag, a model, a label). */
const CUT = '…';

/**
 * `text` with every one of `secrets` (from `searchableSecrets`) replaced, and the start of one
 * (`MIN_SECRET_LENGTH` characters or more) right before a `…` too: a quote cut short keeps only
 * the start of what it quotes, and that start is as much a leak. Cheap where nothing is to be
 * replaced, as on nearly every request: one substring check per secret, `text` returned as it is.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out.includes(CUT) ? redactCutStarts(out, secrets) : out;
}

/**
 * Replaces each start of a secret that runs up to a `…`. A secret that holds another (a proxy
 * token, which holds its secret part) is looked for by that part alone: the rest is its public id
 * (`sk-proxy-<account>_<key>_`, as messages name tokens). Work per secret grows with the text's
 * length times the secret's, never with the square of the text (a body's `model` may be megabytes).
 */
function redactCutStarts(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secrets.some((other) => other !== secret && secret.includes(other))) continue;
    const head = secret.slice(0, MIN_SECRET_LENGTH);
    const pieces: string[] = [];
    let from = 0;
    for (let at = out.indexOf(head); at >= 0; at = out.indexOf(head, at + 1)) {
      let length = head.length;
      while (length < secret.length && out[at + length] === secret[length]) length++;
      if (length === secret.length || !out.startsWith(CUT, at + length)) continue;
      pieces.push(out.slice(from, at), REDACTED);
      from = at + length;
      at = from - 1;
    }
    if (pieces.length) out = pieces.join('') + out.slice(from);
  }
  return out;
}
