// Tests are transpiled by swc (no type-checking here: `npm run typecheck` does that).
// Middy ships ESM only, so it is transformed too.
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true } }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  // Middy's package exports only an `import` condition, which jest's require-based resolver doesn't match.
  moduleNameMapper: {
    '^@middy/core/StreamifyResponse$': '<rootDir>/node_modules/@middy/core/executionModeStreamifyResponse.js',
    '^@middy/([a-z-]+)$': '<rootDir>/node_modules/@middy/$1/index.js',
    // Provided by the build; a test loading the handler's source in-process serves no dashboard.
    '^virtual:dashboard-assets$': '<rootDir>/test/support/dashboard-assets.ts',
  },
  // A limit for when something hangs, not a speed check: tests start real processes (the built
  // server, DynamoDB Local on Java) and wait on conditions (test/support/patience.ts), and on a loaded
  // CI host the same work takes many times as long as on a quiet one.
  testTimeout: 180000,
};

/** Folders whose tests need neither DynamoDB Local nor the built bundles. */
const STANDALONE = ['<rootDir>/test/unit', '<rootDir>/test/fixtures', '<rootDir>/test/fakes'];

export default {
  projects: [
    {
      ...shared,
      // Nothing to start: `npm test -- test/unit` answers in seconds. Its tests see no store, even
      // when they run beside the integration project, so one that needs it fails on its own too.
      displayName: 'unit',
      roots: STANDALONE,
      setupFiles: ['<rootDir>/test/support/no-store.ts'],
    },
    {
      ...shared,
      // The bundles are built and a DynamoDB Local per worker is started, both before the
      // first test of this project and only when one of its tests is selected.
      displayName: 'integration',
      testEnvironment: '<rootDir>/test/support/worker-store.cjs',
      roots: ['<rootDir>/test'],
      testPathIgnorePatterns: ['/node_modules/', ...STANDALONE.map((root) => `${root}/`)],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  testTimeout: shared.testTimeout,
  // Three files at a time, on two cores too: files wait on servers, streams and timers for part of
  // their time (docs/development.md has the measurements).
  maxWorkers: 3,
  // The longest files first, also on a fresh clone (test/support/longest-first.cjs).
  testSequencer: '<rootDir>/test/support/longest-first.cjs',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
