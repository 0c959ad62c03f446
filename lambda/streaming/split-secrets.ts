import { REDACTED } from './redact';

/**
 * A piece of a stream whose JSON a client joins with the pieces before it: an SSE event, an
 * event-stream frame, the model-native event inside a `chunk`. Its strings are found once;
 * `render` gives its bytes, rewritten only if one of them was.
 */
export interface JoinedPiece {
  texts: TextLeaf[];
  render(): Buffer;
}

/** One string of a piece's JSON. `field` names where it sits (keys and indexes): a client joins the strings of one field across pieces. */
export interface TextLeaf {
  field: string;
  value: string;
  /** Whether `value` was changed (the piece must be rendered again). */
  changed: boolean;
}

/**
 * A field whose text ends in this many characters of a credential's start holds its piece back.
 * Fewer pass on (a delta ending in `s` or `sk` is ordinary text, and holding it would delay half of
 * every stream); when the credential goes on in the next pieces, those lose their part of it and
 * the first one carries `[redacted]`, so at most the first three characters of a credential reach
 * the client, which is no more than its public prefix (`sk-`).
 */
export const HOLD_FROM_CHARACTERS = 4;
/** Past this many held bytes the pieces go on as they are: a stream cannot make the proxy hold it whole. */
export const MAX_HELD_BYTES = 256 * 1024;

/** Fields followed at once; past this, what was passed on is forgotten. */
const MAX_FIELDS = 1024;

interface Part {
  leaf: TextLeaf;
}

/**
 * Replaces a credential that an upstream split across pieces of a stream (SECURITY.md, "Split and
 * escaped credentials"): the client would join the text of successive deltas and read it. Each field
 * is followed on its own (the text of `delta.text` across events, say): where its joined text holds
 * a credential, the piece where the credential starts gets `[redacted]` and the following pieces lose
 * their part of it. A piece is held back only while a field's joined text ends in the start of a
 * credential; every other piece is passed on at once, in order.
 */
export class SplitSecretGuard {
  private readonly longest: number;
  private held: JoinedPiece[] = [];
  private heldBytes = 0;
  /** Per field: the end of the text already passed on (it may hold a credential's first characters), and the held parts. */
  private readonly fields = new Map<string, { passed: string; parts: Part[] }>();

  /** The characters a credential starts with: only there can a held start begin. */
  private readonly firstCharacters: Set<string>;

  constructor(private readonly secrets: readonly string[]) {
    this.longest = secrets.reduce((most, secret) => Math.max(most, secret.length), 0);
    this.firstCharacters = new Set(secrets.map((secret) => secret[0]));
  }

  get active(): boolean {
    return this.longest > 0;
  }

  /** Takes the next piece; answers the pieces that may go on now, in order. */
  push(piece: JoinedPiece, size: number): JoinedPiece[] {
    if (!this.active) return [piece];
    this.held.push(piece);
    this.heldBytes += size;
    for (const leaf of piece.texts) {
      let field = this.fields.get(leaf.field);
      if (!field) this.fields.set(leaf.field, (field = { passed: '', parts: [] }));
      field.parts.push({ leaf });
      this.replaceWhole(field);
    }
    const waiting = [...this.fields.values()].some((field) => this.endsInSecretStart(field));
    return waiting && this.heldBytes <= MAX_HELD_BYTES ? [] : this.release();
  }

  /** The stream ended: whatever is held goes on. */
  end(): JoinedPiece[] {
    return this.release();
  }

  private release(): JoinedPiece[] {
    const out = this.held;
    for (const field of this.fields.values()) {
      const joined = field.passed + field.parts.map((part) => part.leaf.value).join('');
      field.passed = joined.slice(-this.longest);
      field.parts = [];
    }
    // Fields are named by the upstream: a stream of ever new ones cannot grow the map without bound.
    if (this.fields.size > MAX_FIELDS) this.fields.clear();
    this.held = [];
    this.heldBytes = 0;
    return out;
  }

  /** Replaces each credential in the field's joined text, the passed-on end included (it cannot change, what follows it can). */
  private replaceWhole(field: { passed: string; parts: Part[] }): void {
    for (;;) {
      const joined = field.passed + field.parts.map((part) => part.leaf.value).join('');
      let match: { at: number; length: number } | undefined;
      for (const secret of this.secrets) {
        const at = joined.indexOf(secret);
        if (at >= 0 && (!match || at < match.at)) match = { at, length: secret.length };
      }
      if (!match) return;
      this.cut(field, match.at, match.at + match.length);
    }
  }

  /** Cuts [from, to) of the joined text out of the held parts; the first part it touches gets `[redacted]`. */
  private cut(field: { passed: string; parts: Part[] }, from: number, to: number): void {
    let offset = field.passed.length;
    let placed = false;
    for (const { leaf } of field.parts) {
      const start = offset;
      const end = offset + leaf.value.length;
      offset = end;
      if (end <= from || start >= to) continue;
      const cutFrom = Math.max(from, start) - start;
      const cutTo = Math.min(to, end) - start;
      leaf.value = leaf.value.slice(0, cutFrom) + (placed ? '' : REDACTED) + leaf.value.slice(cutTo);
      leaf.changed = true;
      placed = true;
    }
    // A credential wholly in text already passed on was replaced there, by the byte redaction.
    if (!placed) field.passed = field.passed.slice(0, from) + REDACTED + field.passed.slice(to);
  }

  /** Whether the joined text ends in at least HOLD_FROM_CHARACTERS of a credential's start, reaching into a held part. */
  private endsInSecretStart(field: { passed: string; parts: Part[] }): boolean {
    if (!field.parts.length) return false;
    const heldLength = field.parts.reduce((sum, part) => sum + part.leaf.value.length, 0);
    if (!heldLength) return false;
    const joined = field.passed + field.parts.map((part) => part.leaf.value).join('');
    const earliest = Math.max(0, joined.length - this.longest + 1);
    for (let start = earliest; start <= joined.length - HOLD_FROM_CHARACTERS; start++) {
      if (!this.firstCharacters.has(joined[start])) continue;
      const rest = joined.slice(start);
      if (this.secrets.some((secret) => secret.length > rest.length && secret.startsWith(rest))) return true;
    }
    return false;
  }
}

/**
 * A parsed JSON document's delta strings as leaves that write back into it (`applyLeaves`): those
 * under a `delta` key (`choices.0.delta.content`, `delta.text`, `delta.partial_json`, Bedrock's
 * `delta.toolUse.input`, the Responses API's `delta`), which is what a client joins across events.
 * Other strings repeat from event to event (ids, models) and are only searched whole.
 */
export interface DocumentLeaves {
  doc: unknown;
  texts: Array<TextLeaf & { holder: Record<string, unknown> | unknown[]; key: string | number }>;
}

/** Strings nested deeper than this are not followed (a provider's events are a few levels deep). */
const MAX_DEPTH = 32;

export function documentLeaves(doc: unknown): DocumentLeaves {
  const texts: DocumentLeaves['texts'] = [];
  const walk = (value: unknown, field: string, depth: number) => {
    if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
    const entries: Array<[string | number, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [index, item])
      : Object.entries(value);
    for (const [key, item] of entries) {
      const name = field ? `${field}.${key}` : String(key);
      if (typeof item === 'string' && (key === 'delta' || /(?:^|\.)delta\./.test(name)))
        texts.push({ field: name, value: item, changed: false, holder: value as Record<string, unknown>, key });
      else walk(item, name, depth + 1);
    }
  };
  walk(doc, '', 0);
  return { doc, texts };
}

/** Writes changed leaves back; whether any was. */
export function applyLeaves({ texts }: DocumentLeaves): boolean {
  let any = false;
  for (const leaf of texts) {
    if (!leaf.changed) continue;
    (leaf.holder as Record<string | number, unknown>)[leaf.key] = leaf.value;
    any = true;
  }
  return any;
}
