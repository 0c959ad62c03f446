import { asObject } from '../../base/json';

/** Longer texts are cut by the row anyway; this only bounds the work on a huge error body. */
const MAX_TEXT = 4_000;
const MAX_DEPTH = 6;

/** Where providers put the human-readable part of an error object, most specific first. */
const MESSAGE_FIELDS = [
  'error',
  'message',
  'detail',
  'msg',
  'errors',
  'error_description',
  'description',
  'title',
] as const;

/**
 * The provider's own error message from an error body, whatever its shape:
 * - `{error:{message}}` (both API styles), `{error:"…"}`;
 * - `{message:"…"}` (Mistral), and Mistral's 422 validation errors, where
 *   `message` is an object `{detail:[{loc, msg}, …]}`;
 * - `[{error:{message}}]` (Gemini wraps its error in an array);
 * - `{detail:"…"}` and `{detail:[{loc, msg}]}` (FastAPI-style servers);
 * - a body that is just a string.
 * Validation items read as `body.messages: Field required`, several joined with `; `.
 * Undefined when the body has no text anywhere a message lives.
 */
export function findErrorMessage(body: unknown): string | undefined {
  const text = messageText(body, 0);
  return text ? text.slice(0, MAX_TEXT) : undefined;
}

function messageText(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    const parts: string[] = [];
    let length = 0;
    for (const item of value) {
      const part = messageText(item, depth + 1);
      if (!part) continue;
      parts.push(part);
      length += part.length + 2;
      if (length > MAX_TEXT) break;
    }
    return parts.length ? parts.join('; ') : undefined;
  }
  const object = asObject(value);
  if (!object) return undefined;
  // A validation item: where the problem is, then what it is.
  if (typeof object.msg === 'string' && Array.isArray(object.loc)) {
    const where = object.loc.filter((part) => typeof part === 'string' || typeof part === 'number').join('.');
    return where ? `${where}: ${object.msg}` : object.msg;
  }
  for (const field of MESSAGE_FIELDS) {
    const text = messageText(object[field], depth + 1);
    if (text) return text;
  }
  return undefined;
}

/** A non-JSON error body (a gateway's HTML or plain text page), as one readable line. */
export function plainErrorText(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const line = text
    .slice(0, MAX_TEXT * 4)
    .replace(/<(head|script|style)(\s[^>]*)?>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line ? line.slice(0, MAX_TEXT) : undefined;
}
