/** Small helpers for reading provider JSON without trusting its shape. */
export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The provider's own error message from an error body, whatever its dialect:
 * `{error:{message}}` (both API styles), `{message}` (Mistral), `[{error:{message}}]` (Gemini), `{detail}`.
 */
export function findErrorMessage(body: unknown): string | undefined {
  const root = Array.isArray(body) ? body[0] : body;
  const object = asObject(root);
  if (!object) return undefined;
  const error = object.error;
  if (typeof error === 'string') return error;
  return asString(asObject(error)?.message) ?? asString(object.message) ?? asString(object.detail);
}
