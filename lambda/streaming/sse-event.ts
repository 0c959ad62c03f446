/** One server-sent event as decoded from the wire. `raw` is the exact text it occupied, terminator included. */
export interface SseEvent {
  event?: string;
  data: string;
  raw: string;
}
