/** One server-sent event as decoded from the wire. `raw` is the exact text it occupied, terminator included. */
export interface SseEvent {
  event?: string;
  data: string;
  raw: string;
  /**
   * A piece of an event larger than the decoder's bound: passed on as text
   * (`raw`), never parsed (`data` is empty). One event may come in several pieces.
   */
  oversized?: true;
}
