import { Transform, type TransformCallback } from 'node:stream';
import { asObject, asString } from '../base/json';
import { appendToArrayMember } from '../providers/dialects/json-splice';
import { RelayCut } from './relay';

/** The longest answer text kept for a continuation's prefill: a longer stream that breaks ends with an error instead. */
export const MAX_PREFILL_CHARS = 1_000_000;

/**
 * What a stream cut mid-answer needs to be continued on another target (docs/fallbacks.md, "A stream
 * cut mid-answer"), one per API shape: it reads the answer as the client receives it, says whether a
 * prefill can carry it on, and makes the continuation follow what the client already has.
 */
export interface Continuer {
  /** The answer as the client receives it: the tap's copy (SSE text, or event-stream frames one base64 line each). */
  append(text: string): void;
  /** Why what the client has cannot be continued (a tool call cut short, too much text…), or undefined. */
  unsound(): string | undefined;
  /** The request body with the answer so far as the assistant's last message. */
  prefill(body: Buffer): Buffer;
  /** Makes the continuation follow what the client has now; one that cannot fails with `failure` (a RelayCut). */
  splice(failure: string): Transform;
  /** For a target that refuses a prefill (4xx): its answer from the start, used only if it begins with what was sent. */
  restart?(failure: string): Transform;
}

/** Raised by a join when the continuation does not fit what the client has. */
export class NotAContinuation extends Error {}

/** Turns a continuation's bytes into what the client gets; throws NotAContinuation when they do not fit. */
export interface Join {
  push(chunk: Buffer, out: Array<string | Buffer>): void;
  end(out: Array<string | Buffer>): void;
}

/**
 * A continuation passed through a join: what fits reaches the client; at the first thing that does
 * not, nothing more passes and the transform fails with `failure` as a RelayCut, which the relay
 * turns into the stream's own error event.
 */
export class JoinTransform extends Transform {
  private failed = false;

  constructor(
    private readonly join: Join,
    private readonly failure: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.run((out) => this.join.push(chunk, out), done);
  }

  override _flush(done: TransformCallback): void {
    this.run((out) => this.join.end(out), done);
  }

  private run(step: (out: Array<string | Buffer>) => void, done: TransformCallback): void {
    if (this.failed) return done();
    const out: Array<string | Buffer> = [];
    try {
      step(out);
    } catch (error) {
      this.failed = true;
      const why = error instanceof NotAContinuation ? error.message : `it could not be read: ${String(error)}`;
      // After the bytes that did fit: the relay's decoder-error path ends the stream with the message.
      queueMicrotask(() => this.destroy(new RelayCut(`${this.failure} (${why})`)));
    }
    done(
      null,
      out.length ? Buffer.concat(out.map((part) => (typeof part === 'string' ? Buffer.from(part) : part))) : undefined,
    );
  }
}

/**
 * The answer text the client has of an assistant turn made of text blocks, and where its last block
 * stands: the state a prefill continues from, shared by the messages and Converse shapes.
 */
export class TextTurn {
  private parts: string[] = [];
  private chars = 0;
  /** Content blocks the client has seen start. */
  blocks = 0;
  /** The last block is still open (its stop not sent). */
  open = false;
  /** The turn's start (`message_start`, `messageStart`) went to the client. */
  private began = false;
  private problem?: string;

  /** A text block's start (or first delta) at `index`. */
  startText(index: number): void {
    this.blocks = Math.max(this.blocks, index + 1);
    this.open = true;
  }

  /** A block a prefill cannot carry (a tool call, thinking) was begun. */
  startOther(index: number, type: string): void {
    this.blocks = Math.max(this.blocks, index + 1);
    this.refuse(`a ${type} block cannot be continued from a prefill`);
  }

  /** The turn's start went to the client. */
  begin(): void {
    this.began = true;
  }

  /** Something a prefill cannot carry went to the client. */
  refuse(problem: string): void {
    this.problem ??= problem;
  }

  addText(text: string): void {
    if (this.problem) return;
    this.chars += text.length;
    if (this.chars > MAX_PREFILL_CHARS) {
      this.problem = `more than ${MAX_PREFILL_CHARS} characters of answer`;
      this.parts = [];
      return;
    }
    this.parts.push(text);
  }

  stop(): void {
    this.open = false;
  }

  /** The answer itself ended (its stop reason was sent): nothing is left to continue. */
  ended(): void {
    this.refuse('the answer had already ended');
  }

  get unsound(): string | undefined {
    return this.problem;
  }

  get text(): string {
    return this.parts.join('');
  }

  /**
   * The prefill's text and where the continuation joins. A prefill may not end in white space
   * (Anthropic refuses one that does): it is sent trimmed, and the continuation's leading white
   * space, which the client already has, dropped.
   */
  start(): JoinStart {
    const text = this.text;
    const prefill = text.trimEnd();
    return {
      began: this.began,
      base: this.open ? this.blocks - 1 : this.blocks,
      merge: this.open,
      dropSpace: prefill.length < text.length,
    };
  }
}

/** Where a continuation joins: its block 0 becomes block `base`, merged into the open text block when `merge`. */
export interface JoinStart {
  /** The client has the turn's start: the continuation's is dropped. */
  began: boolean;
  base: number;
  merge: boolean;
  /** The client's text ends in white space the prefill left out: the continuation's leading white space is dropped. */
  dropSpace: boolean;
}

/** Why a request cannot take a prefill: it already ends with the assistant's own words (a client's prefill). */
export function endsWithAssistant(body: Record<string, unknown> | undefined): string | undefined {
  const messages = body?.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'the request has no messages';
  const last = asObject(messages[messages.length - 1]);
  return asString(last?.role) === 'assistant' ? 'the request already ends with an assistant message' : undefined;
}

/** The body with `message` appended to its `messages`, or unchanged when there is no text to prefill. */
export function withAssistantMessage(body: Buffer, text: string, message: (text: string) => unknown): Buffer {
  const prefill = text.trimEnd();
  return prefill ? appendToArrayMember(body, 'messages', JSON.stringify(message(prefill))) : body;
}

/** Drops a continuation's leading white space while `state.dropping`; stops at its first other character. */
export function dropLeadingSpace(state: { dropping: boolean }, text: string): string {
  if (!state.dropping) return text;
  const rest = text.trimStart();
  if (rest) state.dropping = false;
  return rest;
}
