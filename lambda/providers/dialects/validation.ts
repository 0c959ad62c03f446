import * as z from 'zod/mini';
import type { ValidationResult } from '../types';

/** Content is a string or an array of content parts (images, tool results): both are real SDK traffic. */
const content = z.union([z.string(), z.array(z.unknown())]);
const message = z.looseObject({ role: z.string(), content: z.optional(z.union([content, z.null()])) });

/** Only the fields the spec names are checked; every other field passes through untouched. */
export const chatBodySchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z.array(message),
  max_tokens: z.optional(z.union([z.int().check(z.positive()), z.null()])),
  stream: z.optional(z.union([z.boolean(), z.null()])),
});

export const messagesBodySchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  max_tokens: z.int().check(z.positive()),
  messages: z.array(message),
  stream: z.optional(z.boolean()),
});

/** Runs a schema and names the first offending field, e.g. `messages.0.role`. */
export function validateWith(schema: z.ZodMiniType, body: unknown): ValidationResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, param: '', message: 'The request body must be a JSON object.' };
  }
  const result = z.safeParse(schema, body);
  if (result.success) return { ok: true };
  const issue = result.error.issues[0];
  const param = issue.path.map(String).join('.');
  const value = issue.path.reduce<unknown>((node, key) => (node as Record<PropertyKey, unknown> | undefined)?.[key as string], body);
  const problem = value === undefined ? 'Field required' : issue.message;
  return { ok: false, param, message: `${param}: ${problem}` };
}
