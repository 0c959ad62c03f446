import type { SseEvent } from './sse-event';

/**
 * Incremental server-sent-events decoder: bytes in, whole events out.
 * Chunks may split anywhere (inside a line, a CRLF pair or a multi-byte
 * character); each event keeps the exact text it occupied so a consumer can
 * pass it on unchanged.
 */
export class SseDecoder {
  // ignoreBOM keeps a leading byte-order mark in `raw`, so re-sent bytes equal the received ones.
  private readonly text = new TextDecoder('utf-8', { ignoreBOM: true });
  private pending = '';

  push(chunk: Uint8Array | string): SseEvent[] {
    this.pending += typeof chunk === 'string' ? chunk : this.text.decode(chunk, { stream: true });
    return this.drain(false);
  }

  /** Flushes what is left when the stream ends; an unterminated last event still counts. */
  end(): SseEvent[] {
    this.pending += this.text.decode();
    return this.drain(true);
  }

  /** Text received but not yet part of a whole event. */
  get buffered(): string {
    return this.pending;
  }

  private drain(atEnd: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const boundary = findEventEnd(this.pending, start, atEnd);
      if (boundary < 0) break;
      const raw = this.pending.slice(start, boundary);
      start = boundary;
      events.push(parseEvent(raw));
    }
    this.pending = this.pending.slice(start);
    if (atEnd && this.pending) {
      events.push(parseEvent(this.pending));
      this.pending = '';
    }
    return events;
  }
}

/**
 * Index just past the blank line that ends the event starting at `from`, or -1.
 * A lone trailing `\r` is not yet a line end: its `\n` may be in the next chunk.
 */
function findEventEnd(text: string, from: number, atEnd: boolean): number {
  let lineStart = from;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 10 && c !== 13) continue;
    let next = i + 1;
    if (c === 13) {
      if (next === text.length && !atEnd) return -1;
      if (text.charCodeAt(next) === 10) next++;
    }
    if (i === lineStart) return next; // an empty line ends the event
    lineStart = next;
    i = next - 1;
  }
  return -1;
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
