import * as z from 'zod/mini';
import { ValidationError } from '../base/errors';
import { unsafeCharacterIn } from '../base/plain-text';
import type { ApiCall } from './route-types';

/** The JSON body of a management call; a missing body is `{}`, anything but an object is a 400. */
export function jsonBody(call: ApiCall): Record<string, unknown> {
  const text = call.request.body.toString('utf8').trim();
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * A management body checked against its schema. The first problem is the
 * answer (a 400 naming the field), with the message the schema gives for that
 * field: each field's rules say in words what it must be.
 */
export function parseBody<Schema extends z.ZodMiniType>(
  body: Record<string, unknown>,
  schema: Schema,
): z.output<Schema> {
  const result = z.safeParse(schema, body);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  // A strict body's unknown field is named like any other field.
  const param =
    issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.length ? String(issue.path[0]) : undefined;
  throw new ValidationError(issue.message, param);
}

/**
 * A body that takes only the fields it names: any other field is a 400 naming it, so a typo
 * (`request_per_minute`) is an error rather than a setting silently left out.
 */
export function strictBody<Shape extends z.core.$ZodLooseShape>(shape: Shape, fields: string) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `Unknown field "${String(issue.keys[0])}": this body takes ${fields}.`
        : undefined,
  });
}

/**
 * Whether a money amount has at most 6 decimals (a millionth of its unit): amounts are kept as
 * integers at that precision, and a finer one would be rounded away without a word.
 */
export const hasAtMostSixDecimals = (amount: number) => Number(amount.toFixed(6)) === amount;

/** Why `value` may not be kept or shown as it is: a control or bidirectional character in it, named. */
function unsafeTextMessage(field: string, value: string): string | undefined {
  const unsafe = unsafeCharacterIn(value);
  return unsafe && `${field} holds ${unsafe}, a control or bidirectional character; it must be plain text.`;
}

/**
 * A text the API stores or echoes (a name, a model, a URL, a filter) refuses what would change how
 * it is shown (plain-text.ts): a 400 naming the field, before anything is stored.
 */
export function refuseUnsafeText(field: string, value: string | null | undefined): void {
  const message = value ? unsafeTextMessage(field, value) : undefined;
  if (message) throw new ValidationError(message, field);
}

/** The schema check of `refuseUnsafeText`, for a string field of a body. */
export const plainText = (field: string) =>
  z.superRefine((value: string, context) => {
    const message = unsafeTextMessage(field, value);
    if (message) context.addIssue({ code: 'custom', message, input: value });
  });

/** A token's or account's label: a string of at most 200 characters, plain text. */
const NAME_ERROR = 'name must be a string of at most 200 characters.';
export const tokenName = z.string({ error: NAME_ERROR }).check(z.maxLength(200, NAME_ERROR), plainText('name'));
