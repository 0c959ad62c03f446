/** Shorter values are not redacted: they would match ordinary text (real keys and tokens are far longer). */
export const MIN_SECRET_LENGTH = 8;
/** What stands where a credential was, in bytes, text and headers alike. */
export const REDACTED = '[redacted]';
const REPLACEMENT = Buffer.from(REDACTED);
/** Nothing held back (shared: a carry is only read, never written to). */
const EMPTY = Buffer.alloc(0);

/**
 * Replaces every credential of a request in a byte stream, chunk by chunk,
 * holding back only a tail that could still become a secret with the next
 * chunk: memory stays bounded by the longest secret, and a stream whose chunks
 * end in ordinary text (an event's blank line) is passed on without delay.
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
    const keepFrom = this.startOfPossibleSecret(input, from);
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
