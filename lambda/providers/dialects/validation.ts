import * as z from 'zod/mini';
import type { ValidationResult } from '../types';

/** Content is a string or an array of content parts (images, tool results): both are real SDK traffic. */
const content = z.union([z.string(), z.array(z.unknown())]);
const message = z.looseObject({ role: z.string(), content: z.optional(z.union([content, z.null()])) });

/**
 * Only the fields the proxy requires are checked (docs/errors-and-limits.md, "Errors the proxy
 * answers itself"); every other field passes through
 * untouched. `messages` is checked element by element below, stopping at the
 * first bad one, so a hostile array of a million items costs one issue, not a million.
 */
export const chatBodySchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  // An empty conversation is refused by every provider: answered here, before any upstream call.
  messages: z.array(z.unknown()).check(z.minLength(1)),
  max_tokens: z.optional(z.union([z.int().check(z.positive()), z.null()])),
  stream: z.optional(z.union([z.boolean(), z.null()])),
});

/**
 * Responses API, by OpenAI's own rules: `input` (a string or a list of input items) is
 * optional — a stored prompt, a `conversation` or a `previous_response_id` may carry the
 * whole turn — and `model` may come from a stored prompt (`prompt: { id }`) instead.
 */
export const responsesBodySchema = z.looseObject({
  model: z.optional(z.string().check(z.minLength(1))),
  input: z.optional(z.union([z.string(), z.array(z.unknown())])),
  prompt: z.optional(z.union([z.looseObject({ id: z.string().check(z.minLength(1)) }), z.null()])),
  conversation: z.optional(
    z.union([z.string().check(z.minLength(1)), z.looseObject({ id: z.string().check(z.minLength(1)) }), z.null()]),
  ),
  previous_response_id: z.optional(z.union([z.string().check(z.minLength(1)), z.null()])),
  stream: z.optional(z.union([z.boolean(), z.null()])),
});

/** The Responses checks: the schema, then a model from the body or from its stored prompt. */
export function validateResponsesBody(body: unknown): ValidationResult {
  const checked = validateWith(responsesBodySchema, body, false);
  if (!checked.ok) return checked;
  const { model, prompt } = body as { model?: unknown; prompt?: unknown };
  if (model === undefined && !prompt)
    return { ok: false, param: 'model', message: 'model: Field required (or a stored prompt: prompt.id)' };
  return checked;
}

/** Embeddings: `input` is a string, a list of strings, or token arrays. */
export const embeddingsBodySchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(z.unknown())]),
});

export const messagesBodySchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  max_tokens: z.int().check(z.positive()),
  messages: z.array(z.unknown()).check(z.minLength(1)),
  stream: z.optional(z.boolean()),
});

/** Deeper than this is no real request, and deep enough to exhaust recursive JSON code downstream. */
export const MAX_BODY_DEPTH = 128;

const ARTICLE_TYPES: Record<string, string> = {
  string: 'a string',
  int: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** What was expected, in words: zod/mini ships no messages of its own (it says only "Invalid input"). */
export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
    case 'invalid_union': {
      const words = [...new Set(expectedTypes(issue))];
      if (!words.length) return issue.message;
      return `expected ${words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`}`;
    }
    case 'too_small':
      if (issue.origin === 'string' || (issue.origin === 'array' && Number(issue.minimum) === 1))
        return 'must not be empty';
      if (issue.origin === 'array') return `expected at least ${issue.minimum} items`;
      return issue.inclusive ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
    default:
      return issue.message;
  }
}

/** The types a type or union issue accepts, nested unions flattened (content: string, array or null). */
function expectedTypes(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'invalid_type') return [ARTICLE_TYPES[issue.expected] ?? issue.expected];
  if (issue.code === 'invalid_union')
    return issue.errors.flatMap((branch) => (branch[0] ? expectedTypes(branch[0]) : []));
  return [];
}

function failure(body: unknown, path: PropertyKey[], problem: string): ValidationResult {
  const param = path.map(String).join('.');
  const value = path.reduce<unknown>(
    (node, key) => (node as Record<PropertyKey, unknown> | undefined)?.[key as string],
    body,
  );
  return { ok: false, param, message: `${param}: ${value === undefined ? 'Field required' : problem}` };
}

/** Runs a schema and names the first offending field, e.g. `messages.0.role`. `checksMessages`: also check each of `messages`. */
export function validateWith(schema: z.ZodMiniType, body: unknown, checksMessages = true): ValidationResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, param: '', message: 'The request body must be a JSON object.' };
  }
  if (depthExceeds(body, MAX_BODY_DEPTH))
    return { ok: false, param: '', message: `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.` };
  const result = z.safeParse(schema, body);
  if (!result.success) {
    const issue = result.error.issues[0];
    return failure(body, issue.path, describeIssue(issue));
  }
  if (!checksMessages) return { ok: true };
  const messages = (body as { messages: unknown[] }).messages;
  for (let i = 0; i < messages.length; i++) {
    const checked = z.safeParse(message, messages[i]);
    if (!checked.success)
      return failure(body, ['messages', i, ...checked.error.issues[0].path], describeIssue(checked.error.issues[0]));
  }
  return { ok: true };
}

/** Iterative, so measuring a hostile body can't itself overflow the stack. */
export function depthExceeds(root: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
