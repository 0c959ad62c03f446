// Lint: ESLint's and typescript-eslint's recommended rules, syntax-based (no type information, so a
// run stays cheap on a small machine; `npm run typecheck` does the type checking). Formatting is
// left to the editor: no stylistic rules here.
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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // A `let` declared first and assigned once later is read by closures made before the assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
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
