import { Transform, type TransformCallback } from 'node:stream';
import { tryParseJson } from '../base/json';
import { appendToArrayMember } from '../providers/dialects/json-splice';
import { SseDecoder } from '../sse/sse-decoder';
import type { SseEvent } from '../sse/sse-event';
import { MAX_PREFILL_CHARS, type Continuer } from './continuation';
import { RelayCut } from './relay';

type Chunk = { choices?: Array<{ delta?: { content?: unknown; role?: unknown } }> };

/** The text a chat-completions chunk adds to the answer (choice 0's content delta). */
function contentOf(event: SseEvent): string | undefined {
  if (event.oversized || !event.data.includes('"content"')) return undefined;
  const chunk = tryParseJson(event.data) as Chunk | undefined;
  const content = chunk?.choices?.[0]?.delta?.content;
  return typeof content === 'string' ? content : undefined;
}

/**
 * The answer text a chat-completions stream has delivered, from the bytes the client was sent
 * (whole events only): what a continuation sends back as the assistant's prefill.
 */
export class DeliveredText {
  private readonly decoder = new SseDecoder();
  private parts: string[] = [];
  private chars = 0;
  /** More text than a prefill may carry passed. */
  overflowed = false;

  append(text: string): void {
    if (this.overflowed) return;
    for (const event of this.decoder.push(text)) {
      const content = contentOf(event);
      if (!content) continue;
      this.chars += content.length;
      if (this.chars > MAX_PREFILL_CHARS) {
        this.overflowed = true;
        this.parts = [];
        return;
      }
      this.parts.push(content);
    }
  }

  get text(): string {
    return this.parts.join('');
  }
}

/**
 * Continues a chat-completions stream on another target: the answer so far as the assistant's
 * message (sent as it is: the API takes no prefill, a model may still carry it on), or, for a target
 * that refuses it, the answer from the start checked against what was sent.
 */
export function chatContinuer(): Continuer {
  const delivered = new DeliveredText();
  return {
    append: (text) => delivered.append(text),
    unsound: () => (delivered.overflowed ? `more than ${MAX_PREFILL_CHARS} characters of answer` : undefined),
    prefill: (body) =>
      appendToArrayMember(body, 'messages', JSON.stringify({ role: 'assistant', content: delivered.text })),
    splice: () => new ChatSplice(''),
    restart: (failure) => new ChatSplice(delivered.text, failure),
  };
}

/**
 * The continuation of a chat-completions stream, made to follow what the client already has:
 * its leading events without answer text (the second `role` chunk) are dropped, and, for a
 * restart that answers from the beginning (a target that refuses a prefill), the first
 * `skip.length` characters are checked against what was delivered and dropped, the event that
 * straddles the join cut to its new part. A restart that says something else passes nothing more
 * and fails with `failure` as a `RelayCut`: the relay ends the stream with that error.
 */
export class ChatSplice extends Transform {
  private readonly decoder = new SseDecoder();
  private skipped = 0;
  private joined = false;
  private failed = false;

  constructor(
    private readonly skip: string,
    private readonly failure = 'the continuation did not follow the answer sent',
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    done(null, this.pass(this.decoder.push(chunk)));
  }

  override _flush(done: TransformCallback): void {
    done(null, this.pass(this.decoder.end()));
  }

  private pass(events: SseEvent[]): string {
    let out = '';
    for (const event of events) {
      if (this.failed) return out;
      if (this.joined) {
        out += event.raw;
        continue;
      }
      const content = contentOf(event);
      const wanted = this.skip.length - this.skipped;
      if (!content) {
        // The role chunk is dropped; an ending (finish, usage, [DONE]) before the join is a restart that said less.
        if (!endsAnswer(event)) continue;
        if (wanted > 0) return this.mismatch(out);
        this.joined = true;
        out += event.raw;
        continue;
      }
      if (wanted <= 0) {
        this.joined = true;
        out += event.raw;
        continue;
      }
      const overlap = content.slice(0, wanted);
      if (overlap !== this.skip.slice(this.skipped, this.skipped + overlap.length)) return this.mismatch(out);
      this.skipped += overlap.length;
      const rest = content.slice(overlap.length);
      if (rest) {
        out += withContent(event, rest);
        this.joined = true;
      }
    }
    return out;
  }

  private mismatch(out: string): string {
    this.failed = true;
    // After the bytes that did follow: the relay's decoder-error path ends the stream with the message.
    queueMicrotask(() => this.destroy(new RelayCut(this.failure)));
    return out;
  }
}

/** An event that belongs to the end of an answer: `[DONE]`, a finish reason, the usage, or anything unreadable. */
function endsAnswer(event: SseEvent): boolean {
  if (event.oversized || event.data.trim() === '[DONE]') return true;
  const chunk = tryParseJson(event.data) as
    { usage?: unknown; choices?: Array<{ finish_reason?: unknown }> } | undefined;
  if (!chunk || typeof chunk !== 'object') return event.data.trim() !== '';
  return Boolean(chunk.usage) || Boolean(chunk.choices?.[0]?.finish_reason);
}

/** The event with its content delta replaced. */
function withContent(event: SseEvent, content: string): string {
  const chunk = tryParseJson(event.data) as { choices: Array<{ delta: { content: string } }> };
  chunk.choices[0].delta.content = content;
  return `data: ${JSON.stringify(chunk)}\n\n`;
}
