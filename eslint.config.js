// Lint: ESLint's and typescript-eslint's recommended rules; on lambda/ and lib/ the type-aware ones
// too (floating and misused promises above all). `npm run typecheck` does the type checking.
// Layout is Prettier's (`npm run format`; `npm run lint` checks it): no stylistic rules here.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/', 'dist/', 'cdk.out/', '.data/', 'coverage/', 'test-artifacts/', 'bench/out/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A `_` name drops a field on purpose (`const { secret: _, ...rest } = row`) or keeps a signature.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // A `let` declared first and assigned once later is read by closures made before the assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Type-aware rules where the runtime and the stack live: detached promises are this code's daily bread
    // (background work, early store reads), so a promise left unhandled or passed where a callback's
    // result is ignored fails the lint.
    files: ['lambda/**/*.{ts,tsx}', 'lib/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    // No tsconfigRootDir (the lint runs from the root): ESLint hashes its configuration into every
    // cache entry, and an absolute path there would tie the cache to one checkout (scripts/lint-cache.mjs).
    languageOptions: { parserOptions: { projectService: true } },
    rules: {
      // An async method with no await is how a port's implementation turns a synchronous throw into a rejection.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The dashboard runs in the browser.
    files: ['lambda/dashboard/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
