/**
 * An independent statement of which proxy request bodies are valid (docs/errors-and-limits.md,
 * "Errors the proxy answers itself"), written from the documentation rather than from the
 * proxy's schema, so the property tests have their own oracle.
 */
import fc from 'fast-check';
import type { ProviderId } from '../../fakes/start-fakes';
import { TEST_MODELS } from '../../support/sdk-clients';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const positiveInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value > 0;

/** The first spec-named field that is wrong, or undefined for a valid body. */
export function invalidField(provider: ProviderId, body: unknown): string | undefined {
  if (!isObject(body)) return '(body)';
  if (typeof body.model !== 'string' || body.model.length === 0) return 'model';
  if (!Array.isArray(body.messages)) return 'messages';
  for (const message of body.messages) {
    if (!isObject(message)) return 'messages';
    if (typeof message.role !== 'string') return 'messages';
    const content = message.content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content))
      return 'messages';
  }
  if (provider === 'prov-a' && !positiveInt(body.max_tokens)) return 'max_tokens';
  if (
    provider !== 'prov-a' &&
    body.max_tokens !== undefined &&
    body.max_tokens !== null &&
    !positiveInt(body.max_tokens)
  )
    return 'max_tokens';
  return undefined;
}

export function validBody(provider: ProviderId, extra: Json = {}): Json {
  return { model: TEST_MODELS[provider], max_tokens: 32, messages: [{ role: 'user', content: 'hello' }], ...extra };
}

/** Any JSON value at all. */
const anyValue = fc.jsonValue({ maxDepth: 3 });

/** A valid body with one spec-named field replaced by a value of the wrong kind (or removed). */
export function bodyWithOneBadField(provider: ProviderId): fc.Arbitrary<{ field: string; body: Json }> {
  const remove = fc.constant(undefined);
  const badModel = fc.oneof(
    remove,
    fc.constant(''),
    anyValue.filter((v) => typeof v !== 'string'),
  );
  const badMessages = fc.oneof(
    remove,
    anyValue.filter((v) => !Array.isArray(v)),
    fc.array(
      anyValue.filter((v) => !isObject(v)),
      { minLength: 1, maxLength: 4 },
    ),
    fc.record({ role: anyValue.filter((v) => typeof v !== 'string'), content: fc.string() }).map((m) => [m]),
    fc
      .record({
        role: fc.constant('user'),
        content: anyValue.filter((v) => v !== null && typeof v !== 'string' && !Array.isArray(v)),
      })
      .map((m) => [m]),
  );
  const badMaxTokens = fc.oneof(
    ...(provider === 'prov-a' ? [remove, fc.constant(null)] : []),
    fc.integer({ max: 0 }),
    fc.double({ noInteger: true }),
    fc.string(),
    fc.boolean(),
    fc.array(fc.nat(), { maxLength: 2 }),
  );
  return fc.oneof(
    badModel.map((value) => ({ field: 'model', body: replace(validBody(provider), 'model', value) })),
    badMessages.map((value) => ({ field: 'messages', body: replace(validBody(provider), 'messages', value) })),
    badMaxTokens.map((value) => ({ field: 'max_tokens', body: replace(validBody(provider), 'max_tokens', value) })),
  );
}

function replace(body: Json, field: string, value: unknown): Json {
  const copy = { ...body };
  if (value === undefined) delete copy[field];
  else copy[field] = value;
  return copy;
}

/** Text with the awkward parts of Unicode: lone and paired surrogates, joiners, RTL marks, BOM, NUL, combining marks. */
export const awkwardText = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
      fc.constantFrom(
        '\u0000',
        '\ufeff',
        '\u200d',
        '\u202e',
        '\u0301',
        '\uffff',
        '\ud83d\ude00',
        '👩‍👩‍👧',
        '\u2028',
        '\u2029',
        'ﷺ',
        '\\',
        '"',
      ),
      fc.string({ unit: 'binary', maxLength: 8 }),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((parts) => parts.join(''));
