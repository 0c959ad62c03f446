import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';

/** A frame larger than this is passed on unread (Bedrock's own frames are a few KB). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Total length (4), headers length (4), prelude CRC (4), message CRC (4). */
const MIN_FRAME_BYTES = 16;

const codec = new EventStreamCodec(
  (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  (text: string) => Buffer.from(text, 'utf8'),
);

/** One message of an AWS event stream (`application/vnd.amazon.eventstream`). */
export interface EventStreamMessage {
  /** The frame's bytes exactly as they arrived. */
  frame: Buffer;
  /** `event` or `exception` (`:message-type`). */
  messageType?: string;
  /** `:event-type` of an event (`chunk`, `metadata`, …). */
  eventType?: string;
  /** `:exception-type` of an exception (`throttlingException`, …). */
  exceptionType?: string;
  payload: Buffer;
}

/**
 * Cuts a byte stream into event-stream frames as they complete (the 4-byte length prefix says where
 * each ends) and decodes each with the maintained codec, which checks both CRCs. Chunks may split a
 * frame anywhere. Once a frame is malformed or too large, nothing more is read: the bytes still
 * reach the client, only usage is not taken from them (`problem` says why).
 */
export class EventStreamDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  problem?: string;

  push(chunk: Buffer): EventStreamMessage[] {
    if (this.problem) return [];
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const messages: EventStreamMessage[] = [];
    while (this.pendingBytes >= 4) {
      const head = this.pending[0].length >= 4 ? this.pending[0] : this.joined();
      const length = head.readUInt32BE(0);
      if (length < MIN_FRAME_BYTES || length > MAX_FRAME_BYTES) {
        this.fail(`an event-stream frame of ${length} bytes`);
        break;
      }
      if (this.pendingBytes < length) break;
      const all = this.joined();
      const frame = Buffer.from(all.subarray(0, length));
      this.pending = all.length > length ? [all.subarray(length)] : [];
      this.pendingBytes -= length;
      try {
        messages.push(decode(frame));
      } catch (error) {
        this.fail(`an unreadable event-stream frame (${(error as Error).message})`);
        break;
      }
    }
    return messages;
  }

  /** The stream ended: bytes left over are a frame cut short. */
  end(): void {
    if (!this.problem && this.pendingBytes > 0) this.fail('the stream ended inside an event-stream frame');
  }

  private joined(): Buffer {
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
    return this.pending[0];
  }

  private fail(problem: string): void {
    this.problem = problem;
    this.pending = [];
    this.pendingBytes = 0;
  }
}

function decode(frame: Buffer): EventStreamMessage {
  const { headers, body } = codec.decode(frame);
  const text = (name: string) => {
    const header = headers[name];
    return header?.type === 'string' ? header.value : undefined;
  };
  return {
    frame,
    messageType: text(':message-type'),
    eventType: text(':event-type'),
    exceptionType: text(':exception-type'),
    payload: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  };
}

/** Where a frame's headers lie in its bytes (after the 12-byte prelude). */
export function headerBytes(frame: Buffer): Buffer {
  return frame.subarray(12, 12 + frame.readUInt32BE(4));
}

/**
 * The same frame with another payload (a payload with a credential cut out), its headers kept, or
 * passed through `redact` when given: every header name, string value and byte value.
 */
export function withPayload(
  message: EventStreamMessage,
  payload: Buffer,
  redact?: { text(value: string): string; bytes(value: Buffer): Buffer },
): Buffer {
  let headers = codec.decode(message.frame).headers;
  if (redact) {
    const redacted: MessageHeaders = {};
    for (const [name, header] of Object.entries(headers)) {
      redacted[redact.text(name)] =
        header.type === 'string'
          ? { type: 'string', value: redact.text(header.value) }
          : header.type === 'binary'
            ? {
                type: 'binary',
                value: redact.bytes(Buffer.from(header.value.buffer, header.value.byteOffset, header.value.byteLength)),
              }
            : header;
    }
    headers = redacted;
  }
  return Buffer.from(codec.encode({ headers, body: payload }));
}

/** One event-stream frame, encoded by the same codec (the proxy's own closing error, a stream rebuilt from a stored answer). */
export function encodeEventStreamMessage(kind: { event: string } | { exception: string }, payload: unknown): Buffer {
  const text = (value: string) => ({ type: 'string' as const, value });
  const headers: MessageHeaders =
    'event' in kind
      ? { ':event-type': text(kind.event), ':content-type': text('application/json'), ':message-type': text('event') }
      : {
          ':exception-type': text(kind.exception),
          ':content-type': text('application/json'),
          ':message-type': text('exception'),
        };
  return Buffer.from(codec.encode({ headers, body: Buffer.from(JSON.stringify(payload), 'utf8') }));
}
