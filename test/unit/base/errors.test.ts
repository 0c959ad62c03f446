/**
 * The bundles are minified without esbuild's `keepNames` (scripts/build.mjs), so an error's name
 * must not come from its class's own name, which minifying changes: each class of errors.ts is
 * named by its prototype, set in errors.ts, and every one of them must be there.
 */
import * as errors from '../../../lambda/base/errors';

const errorClasses = Object.entries(errors as Record<string, unknown>).filter(
  (entry): entry is [string, new (...args: never[]) => Error] =>
    typeof entry[1] === 'function' && entry[1].prototype instanceof Error,
);

it('finds the error classes', () => {
  expect(errorClasses.length).toBeGreaterThan(20);
});

it.each(errorClasses)('%s names itself without its class name', (exported, type) => {
  expect(Object.hasOwn(type.prototype, 'name')).toBe(true);
  expect((type.prototype as Error).name).toBe(exported);
});

it('an instance shows its name in its stack', () => {
  const error = new errors.ValidationError('The request body is not valid JSON.');
  expect(error.name).toBe('ValidationError');
  expect(error.stack).toMatch(/^ValidationError: The request body/);
});
