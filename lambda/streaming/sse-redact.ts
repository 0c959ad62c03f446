import { tryParseJson } from '../base/json';
import { SseDecoder } from '../sse/sse-decoder';
import { searchableSecrets, SecretRedactor } from './redact';
import { applyLeaves, documentLeaves, SplitSecretGuard, type JoinedPiece } from './split-secrets';

const EMPTY = Buffer.alloc(0);
const LINE_BREAK = /\r\n|\r|\n/;

/**
 * The credential redaction of a server-sent event stream (SECURITY.md, "Keys"): each whole event is
 * redacted as bytes (a credential as written or JSON-escaped), then its JSON strings go through the
 * split-secret guard, so a credential the upstream spread over the text of several deltas is
 * replaced too. An event is passed on as soon as it is whole, unless a field of it ends in the start
 * of a credential; an event over the decoder's bound is passed on in pieces, redacted as bytes only.
 */
export class SseRedactor {
  private readonly events = new SseDecoder();
  /** Redacts one whole event at a time: emptied by `end` after each. */
  private readonly eventBytes: SecretRedactor;
  /** Redacts the pieces of an oversized event, as a stream. */
  private readonly oversized: SecretRedactor;
  private readonly guard: SplitSecretGuard;

  constructor(secrets: Iterable<string | undefined>) {
    const searchable = searchableSecrets(secrets);
    this.eventBytes = new SecretRedactor(searchable);
    this.oversized = new SecretRedactor(searchable);
    this.guard = new SplitSecretGuard(searchable);
  }

  write(chunk: Buffer): Buffer {
    if (!this.guard.active) return chunk;
    return this.pass(this.events.push(chunk), false);
  }

  end(): Buffer {
    if (!this.guard.active) return EMPTY;
    return this.pass(this.events.end(), true);
  }

  private pass(events: ReturnType<SseDecoder['push']>, atEnd: boolean): Buffer {
    const out: Buffer[] = [];
    for (const event of events) {
      if (event.oversized) {
        out.push(...render(this.guard.end()), this.oversized.write(Buffer.from(event.raw, 'utf8')));
        continue;
      }
      out.push(this.oversized.end());
      const bytes = Buffer.concat([this.eventBytes.write(Buffer.from(event.raw, 'utf8')), this.eventBytes.end()]);
      out.push(...render(this.guard.push(ssePiece(bytes), bytes.length)));
    }
    if (atEnd) out.push(...render(this.guard.end()), this.oversized.end());
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }
}

function render(pieces: JoinedPiece[]): Buffer[] {
  return pieces.map((piece) => piece.render());
}

/** An event as a piece: the strings of its JSON `data`, written back as one `data:` line if one changed. */
function ssePiece(bytes: Buffer): JoinedPiece {
  const raw = bytes.toString('utf8');
  const lines = raw.split(LINE_BREAK);
  const data = lines
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  const doc = data.length ? tryParseJson(data.join('\n')) : undefined;
  if (doc === null || typeof doc !== 'object') return { texts: [], render: () => bytes };
  const leaves = documentLeaves(doc);
  return {
    texts: leaves.texts,
    render() {
      if (!applyLeaves(leaves)) return bytes;
      const kept = lines.filter((line) => line !== '' && !line.startsWith('data:'));
      return Buffer.from(`${[...kept, `data: ${JSON.stringify(leaves.doc)}`].join('\n')}\n\n`, 'utf8');
    },
  };
}
