import type { SseEvent } from '../../sse/sse-event';
import { asObject, tryParseJson, type JsonObject } from '../../base/json';

/*
 * Converts between the Responses API's two answer forms, for cache hits served
 * in the other form. A stream's terminal event carries the whole response, so
 * assembling is reading it; synthesising emits the event sequence the official
 * SDK's stream accumulator expects. Pure functions: no I/O.
 */

const TERMINAL_BY_STATUS: Record<string, string> = {
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
};

/** The `response` object of the stream's terminal event (completed, incomplete or failed). */
export function assembleResponsesResponse(events: SseEvent[]): unknown {
  for (let i = events.length - 1; i >= 0; i--) {
    const data = asObject(tryParseJson(events[i].data));
    if (typeof data?.type === 'string' && Object.values(TERMINAL_BY_STATUS).includes(data.type))
      return asObject(data.response);
  }
  return undefined;
}

function frame(type: string, sequence: number, fields: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`;
}

/** The events of one output item: text parts arrive as added → delta → done; other items whole. */
function itemEvents(item: JsonObject, outputIndex: number, next: () => number): string[] {
  const events: string[] = [];
  const content = Array.isArray(item.content) ? item.content : undefined;
  if (item.type !== 'message' || !content) {
    events.push(frame('response.output_item.added', next(), { output_index: outputIndex, item }));
    events.push(frame('response.output_item.done', next(), { output_index: outputIndex, item }));
    return events;
  }
  const itemId = item.id;
  events.push(
    frame('response.output_item.added', next(), {
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', content: [] },
    }),
  );
  content.forEach((raw, contentIndex) => {
    const part = asObject(raw) ?? {};
    const at = { item_id: itemId, output_index: outputIndex, content_index: contentIndex };
    if (part.type !== 'output_text' || typeof part.text !== 'string') {
      events.push(frame('response.content_part.added', next(), { ...at, part }));
      events.push(frame('response.content_part.done', next(), { ...at, part }));
      return;
    }
    events.push(frame('response.content_part.added', next(), { ...at, part: { ...part, text: '', annotations: [] } }));
    events.push(frame('response.output_text.delta', next(), { ...at, delta: part.text, logprobs: [] }));
    events.push(frame('response.output_text.done', next(), { ...at, text: part.text, logprobs: [] }));
    events.push(frame('response.content_part.done', next(), { ...at, part }));
  });
  events.push(frame('response.output_item.done', next(), { output_index: outputIndex, item }));
  return events;
}

/** The event stream a streaming request would have received for a stored JSON response. */
export function synthesizeResponsesEvents(body: unknown): string[] {
  const response = asObject(body) ?? {};
  let sequence = 0;
  const next = () => sequence++;
  const pending = {
    ...response,
    status: 'in_progress',
    output: [],
    usage: null,
    incomplete_details: null,
    error: null,
  };
  const output = Array.isArray(response.output) ? response.output : [];
  const terminal = TERMINAL_BY_STATUS[String(response.status)] ?? 'response.completed';
  return [
    frame('response.created', next(), { response: pending }),
    frame('response.in_progress', next(), { response: pending }),
    ...output.flatMap((item, index) => itemEvents(asObject(item) ?? {}, index, next)),
    frame(terminal, next(), { response }),
  ];
}
