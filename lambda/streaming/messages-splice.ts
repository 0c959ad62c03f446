import { asObject, asString, tryParseJson, type JsonObject } from '../base/json';
import { SseDecoder } from '../sse/sse-decoder';
import type { SseEvent } from '../sse/sse-event';
import {
  JoinTransform,
  NotAContinuation,
  TextTurn,
  dropLeadingSpace,
  endsWithAssistant,
  withAssistantMessage,
  type Continuer,
  type Join,
  type JoinStart,
} from './continuation';

/** Anthropic's native prefill: the answer so far as the last message, which the model carries on. */
export const anthropicPrefill = (text: string) => ({ role: 'assistant', content: text });

/** Reads one of Anthropic's stream events into the turn a prefill continues (messages, and InvokeModel's Anthropic chunks). */
export function readMessagesEvent(turn: TextTurn, event: JsonObject): void {
  const index = typeof event.index === 'number' ? event.index : 0;
  switch (event.type) {
    case 'message_start':
      return turn.begin();
    case 'content_block_start': {
      const block = asObject(event.content_block);
      const type = asString(block?.type) ?? 'unknown';
      if (type !== 'text') return turn.startOther(index, type);
      turn.startText(index);
      return turn.addText(asString(block?.text) ?? '');
    }
    case 'content_block_delta': {
      const delta = asObject(event.delta);
      if (delta?.type === 'text_delta') turn.addText(asString(delta.text) ?? '');
      return;
    }
    case 'content_block_stop':
      return turn.stop();
    case 'message_delta':
      return turn.ended();
  }
}

/**
 * A messages continuation made to follow what the client has: its `message_start` and `ping`s
 * dropped (the client has its own), its first text block merged into the open one and the blocks
 * after renumbered, and its one `message_delta` carrying the continuation's whole usage (what its
 * `message_start` reported, overwritten by the running totals).
 */
export class MessagesJoin {
  private started = false;
  private startUsage: JsonObject = {};
  private readonly space: { dropping: boolean };

  constructor(private readonly at: JoinStart) {
    this.space = { dropping: at.merge && at.dropSpace };
  }

  /** The events the client gets for one of the continuation's. */
  next(event: JsonObject): JsonObject[] {
    if (event.type === 'error') return [event];
    if (!this.started) {
      if (event.type !== 'message_start') throw new NotAContinuation(`it began with ${String(event.type)}`);
      this.started = true;
      this.startUsage = asObject(asObject(event.message)?.usage) ?? {};
      return this.at.began ? [] : [event];
    }
    const index = this.at.base + (typeof event.index === 'number' ? event.index : 0);
    const joining = this.at.merge && index === this.at.base;
    switch (event.type) {
      case 'ping':
        return [];
      case 'content_block_start': {
        if (!joining) return [{ ...event, index }];
        const block = asObject(event.content_block);
        if (block?.type !== 'text') throw new NotAContinuation(`it went on with a ${String(block?.type)} block`);
        const text = dropLeadingSpace(this.space, asString(block.text) ?? '');
        return text ? [{ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }] : [];
      }
      case 'content_block_delta': {
        const delta = asObject(event.delta);
        if (!joining || delta?.type !== 'text_delta') return [{ ...event, index }];
        const text = dropLeadingSpace(this.space, asString(delta.text) ?? '');
        return text ? [{ ...event, index, delta: { ...delta, text } }] : [];
      }
      case 'content_block_stop':
        return [{ ...event, index }];
      case 'message_delta':
        return [{ ...event, usage: { ...this.startUsage, ...asObject(event.usage) } }];
      default:
        return [event];
    }
  }
}

/** The join over SSE bytes: events it cannot read pass as they came. */
class MessagesSseJoin implements Join {
  private readonly decoder = new SseDecoder();

  constructor(private readonly join: MessagesJoin) {}

  push(chunk: Buffer, out: Array<string | Buffer>): void {
    this.pass(this.decoder.push(chunk), out);
  }

  end(out: Array<string | Buffer>): void {
    this.pass(this.decoder.end(), out);
  }

  private pass(events: SseEvent[], out: Array<string | Buffer>): void {
    for (const event of events) {
      const parsed = event.oversized ? undefined : asObject(tryParseJson(event.data));
      if (typeof parsed?.type !== 'string') {
        out.push(event.raw);
        continue;
      }
      for (const next of this.join.next(parsed))
        out.push(`event: ${String(next.type)}\ndata: ${JSON.stringify(next)}\n\n`);
    }
  }
}

/** Continues an Anthropic messages stream (`/v1/messages`) on another target. */
export function messagesContinuer(body: Record<string, unknown> | undefined): Continuer {
  const decoder = new SseDecoder();
  const turn = new TextTurn();
  const refused = endsWithAssistant(body);
  return {
    append(text) {
      for (const event of decoder.push(text)) {
        const parsed = event.oversized ? undefined : asObject(tryParseJson(event.data));
        if (parsed) readMessagesEvent(turn, parsed);
      }
    },
    unsound: () => refused ?? turn.unsound,
    prefill: (raw) => withAssistantMessage(raw, turn.text, anthropicPrefill),
    splice: (failure) => new JoinTransform(new MessagesSseJoin(new MessagesJoin(turn.start())), failure),
  };
}
