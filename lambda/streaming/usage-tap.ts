import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import type { Dialect, StreamOutcome } from '../providers/types';
import type { Usage } from '../providers/usage';
import { tryParseJson } from '../base/json';
import { SseDecoder } from '../sse/sse-decoder';
import { EventStreamDecoder } from '../eventstream/event-stream-decoder';

/** JSON bodies are parsed whole up to this size; past it, the model is read from the head and usage from the tail. */
const MAX_JSON_READ = 16 * 1024 * 1024;
const TAIL_BYTES = 256 * 1024;
/** Error bodies: only this much is kept, for the row's error message (the client gets every byte). */
export const MAX_ERROR_READ = 64 * 1024;

export interface TapOptions {
  dialect: Dialect;
  /** `eventstream`: AWS's binary event stream. `opaque`: none of these (a file download); passed through without reading. */
  format: 'json' | 'sse' | 'eventstream' | 'opaque';
  /** Take out of each event what the proxy's own request for stream usage added (the client didn't ask). */
  hideAddedUsage: boolean;
  /** A JSON body is kept and parsed up to this many bytes (default 16 MB). */
  maxJsonRead?: number;
  /** Usage the answer's headers carried (Bedrock's token counts), for a body that carries none. */
  headerUsage?: Usage;
  /** Gets a copy of the answer as it passes (the cache's fill). */
  copy?: AnswerCopy;
}

/** Where a copy of the answer goes, kept apart from what the client receives. */
export interface AnswerCopy {
  /**
   * The upstream's text as it arrives. An event stream's binary frames arrive whole, one base64
   * line each (`eventStreamFrames` turns them back into bytes).
   */
  append(text: string): void;
  /** After the last upstream byte, before the client's stream ends (committing the cache entry). */
  finish(result: TapResult): Promise<void>;
}

export interface TapResult extends StreamOutcome {
  /** The whole body, for JSON responses (needed for error messages and caching). */
  json?: unknown;
  /** The body's text when it was not parsed (a gateway's error page; the start of a body too large to parse), for the row's error. */
  text?: string;
  bytes: number;
  /** Stream events larger than the decoder's bound, passed on without being parsed. */
  oversizedEvents: number;
}

/**
 * Passes the provider's bytes to the client untouched, reading usage on the
 * side. Only when the proxy itself asked for stream usage does it hold back
 * bytes up to the end of an event, to take out what asking added.
 */
export class UsageTap extends Transform {
  private readonly decoder = new SseDecoder();
  private readonly frames = new EventStreamDecoder();
  // Chunks can split a multi-byte character; the observer gets whole characters.
  private readonly observerText = new StringDecoder('utf8');
  private readonly reader;
  private readonly jsonChunks: Buffer[] = [];
  private jsonBytes = 0;
  /** For bodies past the read limit: at least the last TAIL_BYTES, where providers put usage. */
  private jsonTail: Buffer[] = [];
  private jsonTailBytes = 0;
  private bytes = 0;
  private readonly maxJsonRead: number;
  private terminalPassed = false;

  constructor(private readonly options: TapOptions) {
    super();
    this.reader = options.dialect.newStreamReader();
    this.maxJsonRead = options.maxJsonRead ?? MAX_JSON_READ;
  }

  /**
   * The stream's terminal event (the dialect's end of the answer: `[DONE]`, `message_stop`,
   * `response.completed`, Bedrock's `metadata`…) has gone to the client: the answer is complete,
   * whatever the provider's connection does next. Emitted once, as `'answered'`.
   */
  get answered(): boolean {
    return this.terminalPassed;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // Bytes after the terminal event are not part of the answer.
    if (this.terminalPassed) return done();
    this.bytes += chunk.length;
    const out = this.readChunk(chunk);
    if (!this.isStream() || !this.reader.outcome().complete) return done(null, out);
    this.terminalPassed = true;
    // The entry is committed before the client sees the end, so a retry right after always hits.
    const passOn = () => {
      done(null, out);
      this.emit('answered');
    };
    if (!this.options.copy) return passOn();
    this.options.copy.finish(this.result()).then(passOn, passOn);
  }

  /** The answer itself has ended (a stream's finish or stop reason); its usage and terminal event may still be on the way. */
  get answerEnded(): boolean {
    return this.isStream() && this.reader.outcome().answerEnded === true;
  }

  /**
   * The client left after the answer ended: the rest of the provider's stream is read for its usage
   * and for the cache's copy, with nothing passed on. True once the terminal event has been read.
   */
  readAfterClientLeft(chunk: Buffer): boolean {
    if (this.terminalPassed) return true;
    this.bytes += chunk.length;
    this.readChunk(chunk);
    this.terminalPassed = this.reader.outcome().complete;
    return this.terminalPassed;
  }

  /** Commits the cache's copy of an answer whose terminal event was read after the client left. */
  async finishAfterClientLeft(): Promise<void> {
    if (this.terminalPassed) await this.options.copy?.finish(this.result());
  }

  private isStream(): boolean {
    return this.options.format === 'sse' || this.options.format === 'eventstream';
  }

  /** Reads a chunk of the (decoded) body; returns what the client gets. */
  private readChunk(chunk: Buffer): Buffer | undefined {
    if (this.options.format === 'eventstream') return this.readFrames(chunk);
    this.options.copy?.append(this.observerText.write(chunk));
    if (this.options.format === 'opaque') return chunk;
    if (this.options.format === 'json') {
      if (this.jsonBytes + chunk.length <= this.maxJsonRead) this.jsonChunks.push(chunk);
      else this.keepTail(chunk);
      this.jsonBytes += chunk.length;
      return chunk;
    }
    const events = this.decoder.push(chunk);
    for (const event of events) this.reader.onEvent(event);
    if (!this.options.hideAddedUsage) return chunk;
    let out = '';
    for (const event of events) out += this.options.dialect.withoutAddedUsage(event);
    return out ? Buffer.from(out, 'utf8') : undefined;
  }

  private readFrames(chunk: Buffer): Buffer {
    for (const message of this.frames.push(chunk)) {
      this.options.copy?.append(`${message.frame.toString('base64')}\n`);
      const exception =
        message.messageType === 'event' ? undefined : (message.exceptionType ?? message.messageType ?? 'exception');
      this.reader.onEvent({ event: message.eventType, data: message.payload.toString('utf8'), exception });
    }
    return chunk;
  }

  override _flush(done: TransformCallback): void {
    if (this.terminalPassed) return done();
    const tail = this.observerText.end();
    if (tail) this.options.copy?.append(tail);
    if (this.options.format === 'eventstream') this.frames.end();
    if (this.options.format === 'sse') {
      const events = this.decoder.end();
      for (const event of events) this.reader.onEvent(event);
      if (this.options.hideAddedUsage) {
        const rest = events.map((e) => this.options.dialect.withoutAddedUsage(e)).join('');
        if (rest) this.push(rest);
      }
    }
    if (!this.options.copy) return done();
    this.options.copy.finish(this.result()).then(
      () => done(),
      () => done(),
    );
  }

  /** Keeps the last chunks covering TAIL_BYTES, without copying the whole tail on every chunk. */
  private keepTail(chunk: Buffer): void {
    this.jsonTail.push(chunk);
    this.jsonTailBytes += chunk.length;
    while (this.jsonTailBytes - this.jsonTail[0].length >= TAIL_BYTES)
      this.jsonTailBytes -= this.jsonTail.shift()!.length;
  }

  /** What the body said so far: complete after 'end', partial after an interruption. */
  result(): TapResult {
    const read = this.readBody();
    const { headerUsage } = this.options;
    return read.usage === undefined && headerUsage ? { ...read, usage: headerUsage } : read;
  }

  private readBody(): TapResult {
    if (this.options.format === 'opaque') return { complete: true, bytes: this.bytes, oversizedEvents: 0 };
    if (this.options.format === 'eventstream') {
      const outcome = this.reader.outcome();
      const problem = this.frames.problem && `usage not read: ${this.frames.problem}`;
      const error = outcome.error ?? problem;
      return { ...outcome, error, complete: outcome.complete && !error, bytes: this.bytes, oversizedEvents: 0 };
    }
    if (this.options.format === 'sse') {
      const outcome = this.reader.outcome();
      return { ...outcome, bytes: this.bytes, oversizedEvents: this.decoder.oversizedEvents };
    }
    const head = Buffer.concat(this.jsonChunks).toString('utf8');
    if (this.jsonBytes <= this.maxJsonRead) {
      const json = tryParseJson(head);
      const read = json === undefined ? {} : this.options.dialect.readResponse(json);
      return {
        ...read,
        json,
        text: json === undefined ? head : undefined,
        complete: json !== undefined,
        bytes: this.bytes,
        oversizedEvents: 0,
      };
    }
    // Too large to parse on the request path's budget: read the two fields where providers put them.
    const model = /"model"\s*:\s*"([^"]{1,200})"/.exec(head.slice(0, 64 * 1024))?.[1];
    const usage = tryParseJson(
      `{${lastUsageField(Buffer.concat(this.jsonTail).subarray(-TAIL_BYTES).toString('utf8')) ?? ''}}`,
    );
    const read = this.options.dialect.readResponse({ ...(usage as object), model });
    return { ...read, text: head, complete: true, bytes: this.bytes, oversizedEvents: 0 };
  }
}

/** For bodies too large to parse: the last `"usage":{…}` object, which providers put near the end. */
function lastUsageField(text: string): string | undefined {
  const at = text.lastIndexOf('"usage"');
  if (at < 0) return undefined;
  const open = text.indexOf('{', at);
  let depth = 0;
  for (let i = open; i >= 0 && i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return `"usage":${text.slice(open, i + 1)}`;
  }
  return undefined;
}
