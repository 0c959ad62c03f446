import {
  EventStreamDecoder,
  headerBytes,
  withPayload,
  type EventStreamMessage,
} from '../eventstream/event-stream-decoder';
import { asObject, tryParseJson } from '../json';
import { redactText, searchableSecrets, SecretRedactor } from './redact';

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

  /** `unreadable`: the closing frame for a stream that stopped being frames. */
  constructor(
    secrets: Iterable<string | undefined>,
    private readonly unreadable: (problem: string) => Buffer,
  ) {
    this.secrets = searchableSecrets(secrets);
    this.redactor = new SecretRedactor(this.secrets);
    this.active = this.secrets.length > 0;
  }

  write(chunk: Buffer): Buffer {
    if (!this.active) return chunk;
    if (this.stopped) return EMPTY;
    // The decoder holds a frame's bytes until it is whole; nothing of it is passed on before.
    const out = this.frames.push(chunk).map((message) => this.redactFrame(message));
    if (this.frames.problem) out.push(this.stop(this.frames.problem));
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  end(): Buffer {
    if (!this.active || this.stopped) return EMPTY;
    this.frames.end();
    return this.frames.problem ? this.stop(this.frames.problem) : EMPTY;
  }

  private stop(problem: string): Buffer {
    this.stopped = true;
    return this.unreadable(
      `The provider's event stream could not be read (${problem}); the rest of it was not passed on.`,
    );
  }

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
