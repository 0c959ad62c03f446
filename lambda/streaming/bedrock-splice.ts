import { asObject, asString, tryParseJson, type JsonObject } from '../base/json';
import {
  EventStreamDecoder,
  encodeEventStreamMessage,
  type EventStreamMessage,
} from '../eventstream/event-stream-decoder';
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
import { MessagesJoin, anthropicPrefill, readMessagesEvent } from './messages-splice';

/** One event of a continuation, as the client gets it: its `:event-type` and payload. */
type Event = [type: string, payload: JsonObject];

/** The events a continuation's event becomes (none, itself changed, or more). */
type EventJoin = (type: string, payload: JsonObject) => Event[];

/**
 * The tap's copy of an event stream, one base64 line per frame, back into its messages (a line
 * split over two appends is joined first).
 */
class CopiedFrames {
  private rest = '';
  private readonly decoder = new EventStreamDecoder();

  push(text: string): EventStreamMessage[] {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop()!;
    return lines.filter(Boolean).flatMap((line) => this.decoder.push(Buffer.from(line, 'base64')));
  }
}

const payloadOf = (message: EventStreamMessage) => asObject(tryParseJson(message.payload.toString('utf8')));

/**
 * The join over an AWS event stream: each event's frame rebuilt by the same codec (new headers
 * and CRCs) where the join changes it; an exception frame passes as it came, so the SDK raises it.
 */
class EventStreamJoin implements Join {
  private readonly decoder = new EventStreamDecoder();

  constructor(private readonly join: EventJoin) {}

  push(chunk: Buffer, out: Array<string | Buffer>): void {
    for (const message of this.decoder.push(chunk)) {
      if (message.messageType !== 'event' || !message.eventType) {
        out.push(message.frame);
        continue;
      }
      const payload = payloadOf(message);
      if (!payload) throw new NotAContinuation(`an unreadable ${message.eventType} event`);
      for (const [type, next] of this.join(message.eventType, payload))
        out.push(encodeEventStreamMessage({ event: type }, next));
    }
    if (this.decoder.problem) throw new NotAContinuation(this.decoder.problem);
  }

  end(): void {
    this.decoder.end();
    if (this.decoder.problem) throw new NotAContinuation(this.decoder.problem);
  }
}

/** Converse's content-block index of an event (0 when it names none). */
const blockIndex = (payload: JsonObject) =>
  typeof payload.contentBlockIndex === 'number' ? payload.contentBlockIndex : 0;

/** Reads one ConverseStream event into the turn a prefill continues. A text block has no start event: its first delta opens it. */
function readConverseEvent(turn: TextTurn, type: string, payload: JsonObject): void {
  const index = blockIndex(payload);
  switch (type) {
    case 'messageStart':
      return turn.begin();
    case 'contentBlockStart':
      return turn.startOther(index, Object.keys(asObject(payload.start) ?? {})[0] ?? 'unknown');
    case 'contentBlockDelta': {
      const delta = asObject(payload.delta) ?? {};
      if (typeof delta.text !== 'string') return turn.startOther(index, Object.keys(delta)[0] ?? 'unknown');
      turn.startText(index);
      return turn.addText(delta.text);
    }
    case 'contentBlockStop':
      return turn.stop();
    case 'messageStop':
      return turn.ended();
  }
}

/**
 * A ConverseStream continuation made to follow what the client has: its `messageStart` dropped,
 * its first text block's deltas given the open block's `contentBlockIndex` and the blocks after
 * renumbered; its `messageStop` and `metadata` (the continuation's usage) pass as sent.
 */
function converseJoin(at: JoinStart): EventJoin {
  let started = false;
  const space = { dropping: at.merge && at.dropSpace };
  return (type, payload) => {
    if (!started) {
      if (type !== 'messageStart') throw new NotAContinuation(`it began with ${type}`);
      started = true;
      return at.began ? [] : [[type, payload]];
    }
    if (!('contentBlockIndex' in payload)) return [[type, payload]];
    const contentBlockIndex = at.base + blockIndex(payload);
    const joining = at.merge && contentBlockIndex === at.base;
    if (joining && type === 'contentBlockStart') throw new NotAContinuation('it went on with a tool call');
    const delta = asObject(payload.delta);
    if (!joining || type !== 'contentBlockDelta') return [[type, { ...payload, contentBlockIndex }]];
    if (typeof delta?.text !== 'string') throw new NotAContinuation('it went on with something other than text');
    const text = dropLeadingSpace(space, delta.text);
    return text ? [[type, { ...payload, contentBlockIndex, delta: { ...delta, text } }]] : [];
  };
}

/** InvokeModel's chunk: one Anthropic stream event, base64 in `bytes`. */
function anthropicChunk(payload: JsonObject): JsonObject | undefined {
  const bytes = asString(payload.bytes);
  const event = bytes === undefined ? undefined : asObject(tryParseJson(Buffer.from(bytes, 'base64').toString('utf8')));
  return typeof event?.type === 'string' ? event : undefined;
}

/** An InvokeModel continuation: each chunk's Anthropic event through the messages join, re-wrapped as a chunk. */
function invokeJoin(at: JoinStart): EventJoin {
  const join = new MessagesJoin(at);
  return (type, payload) => {
    if (type !== 'chunk') return [[type, payload]];
    const event = anthropicChunk(payload);
    if (!event) throw new NotAContinuation('a chunk that is not an Anthropic event');
    return join.next(event).map((next) => ['chunk', { bytes: Buffer.from(JSON.stringify(next)).toString('base64') }]);
  };
}

/** A Bedrock stream continuer: the turn read from the tap's copied frames, the join over the continuation's frames. */
function eventStreamContinuer(
  body: Record<string, unknown> | undefined,
  read: (turn: TextTurn, type: string, payload: JsonObject) => void,
  message: (text: string) => unknown,
  join: (at: JoinStart) => EventJoin,
): Continuer {
  const frames = new CopiedFrames();
  const turn = new TextTurn();
  const refused = endsWithAssistant(body);
  return {
    append(text) {
      for (const frame of frames.push(text)) {
        const payload = frame.messageType === 'event' && frame.eventType ? payloadOf(frame) : undefined;
        if (payload) read(turn, frame.eventType!, payload);
      }
    },
    unsound: () => refused ?? turn.unsound,
    prefill: (raw) => withAssistantMessage(raw, turn.text, message),
    splice: (failure) => new JoinTransform(new EventStreamJoin(join(turn.start())), failure),
  };
}

/** Continues a ConverseStream on another target: the prefill is Converse's assistant message. */
export const converseContinuer = (body: Record<string, unknown> | undefined): Continuer =>
  eventStreamContinuer(body, readConverseEvent, (text) => ({ role: 'assistant', content: [{ text }] }), converseJoin);

/** Continues an InvokeModelWithResponseStream whose chunks are Anthropic's events (any other family: not continued). */
export const invokeContinuer = (body: Record<string, unknown> | undefined): Continuer =>
  eventStreamContinuer(
    body,
    (turn, type, payload) => {
      if (type !== 'chunk') return;
      const event = anthropicChunk(payload);
      if (event) readMessagesEvent(turn, event);
      else turn.refuse('only an Anthropic model’s stream can be continued');
    },
    anthropicPrefill,
    invokeJoin,
  );
