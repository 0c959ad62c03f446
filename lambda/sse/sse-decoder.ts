import type { SseEvent } from './sse-event';

/** Events larger than this are passed on in pieces, unparsed: no provider sends one, and parsing it would hold the process. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

const LF = 10;
const CR = 13;

/**
 * Incremental server-sent-events decoder: bytes in, whole events out.
 * Chunks may split anywhere (inside a line, a CRLF pair or a multi-byte
 * character); each event keeps the exact text it occupied so a consumer can
 * pass it on unchanged. Each character is looked at once, whatever the size of
 * the event it belongs to, and at most MAX_EVENT_CHARS of one event are held.
 */
export class SseDecoder {
  // ignoreBOM keeps a leading byte-order mark in `raw`, so re-sent bytes equal the received ones.
  private readonly text = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Text of the event in progress, as received (joined only once the event is whole). */
  private parts: string[] = [];
  private partsLength = 0;
  /** No character yet on the current line. */
  private lineEmpty = true;
  /** The last character was a CR: a following LF belongs to the same line end. */
  private afterCR = false;
  /** That CR ended an empty line, so the event ends with it (or with the LF that may follow). */
  private crEndsEvent = false;
  /** The event in progress went past the bound and is being passed on in pieces. */
  private oversized = false;
  private oversizedCount = 0;

  constructor(private readonly maxEventChars = MAX_EVENT_CHARS) {}

  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.text.decode(chunk, { stream: true });
    return this.scan(text, false);
  }

  /** Flushes what is left when the stream ends; an unterminated last event still counts. */
  end(): SseEvent[] {
    return this.scan(this.text.decode(), true);
  }

  /** Text received but not yet part of a whole event. */
  get buffered(): string {
    return this.parts.join('');
  }

  /** Events that went past the bound and were passed on without being parsed. */
  get oversizedEvents(): number {
    return this.oversizedCount;
  }

  private scan(text: string, atEnd: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    const cut = (end: number) => {
      events.push(this.finishEvent(text.slice(start, end)));
      start = end;
    };
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.afterCR) {
        this.afterCR = false;
        if (c === LF) {
          if (this.crEndsEvent) cut(i + 1);
          continue;
        }
        if (this.crEndsEvent) cut(i);
      }
      if (c === CR) {
        this.afterCR = true;
        this.crEndsEvent = this.lineEmpty;
        this.lineEmpty = true;
      } else if (c === LF) {
        if (this.lineEmpty) cut(i + 1); // an empty line ends the event
        this.lineEmpty = true;
      } else {
        this.lineEmpty = false;
      }
    }
    if (atEnd) {
      this.afterCR = false;
      if (start < text.length || this.partsLength > 0) cut(text.length);
      return events;
    }
    if (start < text.length) this.keep(text.slice(start), events);
    return events;
  }

  /** Holds the unfinished event's text; past the bound, hands it on as an unparsed piece instead. */
  private keep(piece: string, events: SseEvent[]): void {
    if (this.oversized) {
      events.push({ data: '', raw: piece, oversized: true });
      return;
    }
    this.parts.push(piece);
    this.partsLength += piece.length;
    if (this.partsLength <= this.maxEventChars) return;
    this.oversized = true;
    events.push({ data: '', raw: this.takeParts(), oversized: true });
  }

  private finishEvent(tail: string): SseEvent {
    this.lineEmpty = true;
    if (this.oversized) {
      this.oversized = false;
      this.oversizedCount++;
      return { data: '', raw: tail, oversized: true };
    }
    this.parts.push(tail);
    return parseEvent(this.takeParts());
  }

  private takeParts(): string {
    const raw = this.parts.length === 1 ? this.parts[0] : this.parts.join('');
    this.parts = [];
    this.partsLength = 0;
    return raw;
  }
}

/** Every piece of text becomes an event so `raw` covers each byte; comment-only or blank ones have empty data. */
function parseEvent(raw: string): SseEvent {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  return { event, data: data.join('\n'), raw };
}
