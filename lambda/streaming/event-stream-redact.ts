import {
  EventStreamDecoder,
  headerBytes,
  withPayload,
  type EventStreamMessage,
} from '../eventstream/event-stream-decoder';
import { asObject, tryParseJson } from '../base/json';
import { redactText, searchableSecrets, SecretRedactor } from './redact';
import { applyLeaves, documentLeaves, SplitSecretGuard, type JoinedPiece } from './split-secrets';

const EMPTY = Buffer.alloc(0);

/**
 * The credential redaction of an AWS event stream (SECURITY.md, "Keys"). Replacing bytes in place
 * would break the frame's length and CRCs, and a `chunk` event hides its model-native event in
 * base64 (`bytes`), where a byte search finds nothing. So each frame is read whole: a credential
 * in its payload, in the base64 `bytes` inside it, or in one of its headers (a name, a string or
 * byte value), is replaced and the frame encoded again; a frame without one passes on byte for byte. If the stream stops being readable
 * frames (a bad CRC, a frame over the decoder's bound, a frame cut short), nothing more of it is
 * passed on — base64 inside it could hide a credential — and the stream ends with the proxy's own
 * exception frame saying so, as a compressed answer the proxy cannot decode is never passed on.
 */
export class EventStreamRedactor {
  private readonly secrets: string[];
  /** Redacts one whole piece at a time (`redact`): its carry is emptied by `end` after every piece, so one serves every frame. */
  private readonly redactor: SecretRedactor;
  private readonly frames = new EventStreamDecoder();
  private stopped = false;
  private readonly active: boolean;
  /** A credential spread over the text of several frames (`contentBlockDelta`, `chunk`) is replaced too. */
  private readonly guard: SplitSecretGuard;

  /** `unreadable`: the closing frame for a stream that stopped being frames. */
  constructor(
    secrets: Iterable<string | undefined>,
    private readonly unreadable: (problem: string) => Buffer,
  ) {
    this.secrets = searchableSecrets(secrets);
    this.redactor = new SecretRedactor(this.secrets);
    this.active = this.secrets.length > 0;
    this.guard = new SplitSecretGuard(this.secrets);
  }

  write(chunk: Buffer): Buffer {
    if (!this.active) return chunk;
    if (this.stopped) return EMPTY;
    // The decoder holds a frame's bytes until it is whole; nothing of it is passed on before.
    const out: Buffer[] = [];
    for (const message of this.frames.push(chunk)) {
      const frame = this.redactFrame(message);
      const pieces = this.guard.push(framePiece({ ...message, frame }), frame.length);
      for (const piece of pieces) out.push(piece.render());
    }
    if (this.frames.problem) out.push(...this.release(), this.stop(this.frames.problem));
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  end(): Buffer {
    if (!this.active || this.stopped) return EMPTY;
    this.frames.end();
    const rest = this.release();
    if (this.frames.problem) rest.push(this.stop(this.frames.problem));
    return Buffer.concat(rest);
  }

  private release(): Buffer[] {
    return this.guard.end().map((piece) => piece.render());
  }

  private stop(problem: string): Buffer {
    this.stopped = true;
    return this.unreadable(
      `The provider's event stream could not be read (${problem}); the rest of it was not passed on.`,
    );
  }

  /** The frame with every whole credential replaced (its payload updated to match). */
  private redactFrame(message: EventStreamMessage): Buffer {
    const original = message.payload.toString('utf8');
    let text = original;
    // Only a `chunk` event carries base64 (`bytes`); every other payload is searched as it is.
    const json = message.eventType === 'chunk' ? asObject(tryParseJson(text)) : undefined;
    if (typeof json?.bytes === 'string') {
      const inner = Buffer.from(json.bytes, 'base64');
      const clean = this.redact(inner);
      if (!clean.equals(inner)) text = JSON.stringify({ ...json, bytes: clean.toString('base64') });
    }
    const payload = this.redact(Buffer.from(text, 'utf8'));
    // A header (a name, a string or byte value) quoting a credential is rebuilt with it cut out.
    const frameHeaders = headerBytes(message.frame);
    if (this.secrets.some((secret) => frameHeaders.includes(secret))) {
      return withPayload(message, payload, {
        text: (value) => redactText(value, this.secrets),
        bytes: (value) => this.redact(value),
      });
    }
    return text === original && payload.equals(message.payload) ? message.frame : withPayload(message, payload);
  }

  private redact(bytes: Buffer): Buffer {
    return Buffer.concat([this.redactor.write(bytes), this.redactor.end()]);
  }
}

/**
 * A frame as a piece of the split-secret guard: the strings of its JSON payload, or of the
 * model-native event base64-encoded inside a `chunk`; the frame is encoded again if one changed.
 */
function framePiece(message: EventStreamMessage): JoinedPiece {
  const frame = message.frame;
  const payload = frame.subarray(12 + frame.readUInt32BE(4), frame.length - 4);
  const outer = asObject(tryParseJson(payload.toString('utf8')));
  if (!outer) return { texts: [], render: () => frame };
  const inner = message.eventType === 'chunk' && typeof outer.bytes === 'string' ? outer.bytes : undefined;
  const doc = inner === undefined ? outer : tryParseJson(Buffer.from(inner, 'base64').toString('utf8'));
  if (doc === null || typeof doc !== 'object') return { texts: [], render: () => frame };
  const leaves = documentLeaves(doc);
  return {
    texts: leaves.texts,
    render() {
      if (!applyLeaves(leaves)) return frame;
      const json = JSON.stringify(leaves.doc);
      const text =
        inner === undefined ? json : JSON.stringify({ ...outer, bytes: Buffer.from(json).toString('base64') });
      return withPayload(message, Buffer.from(text, 'utf8'));
    },
  };
}
