/**
 * The suite's order of test files (test/support/longest-first.cjs): on a clone jest has never run,
 * the files a run in another clone found longest go first, as jest orders them itself once it knows
 * their durations; the durations are kept by repository path.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cacheHome = mkdtempSync(join(tmpdir(), 'durations-'));
const durations = join(cacheHome, 'ai-usage-proxy', 'test-durations.json');
mkdirSync(join(cacheHome, 'ai-usage-proxy'));
/** Jest's own cache for the clones below: without their durations (`cache: false`), as on a fresh clone. */
const jestCache = mkdtempSync(join(tmpdir(), 'jest-cache-'));

/** A test file as jest hands it to a sequencer, in a clone at `root` whose jest cache is empty. */
function testFile(root: string, path: string) {
  return {
    path: join(root, path),
    context: {
      config: { rootDir: root, cache: false, cacheDirectory: jestCache, id: 'clone', haste: {} },
      hasteFS: { getSize: () => 100 },
    },
  };
}

function sequencer(): {
  sort(tests: unknown[]): Array<{ path: string }>;
  cacheResults(tests: unknown[], results: unknown): void;
} {
  const previous = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cacheHome;
  try {
    let LongestFirst: new (options: object) => ReturnType<typeof sequencer>;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      LongestFirst = require('../support/longest-first.cjs');
    });
    return new LongestFirst!({});
  } finally {
    process.env.XDG_CACHE_HOME = previous;
  }
}

test("a fresh clone runs the files another clone's run found longest first, and keeps this run's durations by repository path", () => {
  const first = sequencer();
  const tests = ['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'].map((path) => testFile('/clone-one', path));
  first.cacheResults(tests, {
    testResults: [
      { testFilePath: '/clone-one/test/a.test.ts', perfStats: { start: 1_000, end: 1_500 } },
      { testFilePath: '/clone-one/test/b.test.ts', perfStats: { start: 1_000, end: 91_000 } },
      { testFilePath: '/clone-one/test/c.test.ts', perfStats: { start: 1_000, end: 8_000 } },
    ],
  });
  expect(JSON.parse(readFileSync(durations, 'utf8'))).toEqual({
    'test/a.test.ts': 500,
    'test/b.test.ts': 90_000,
    'test/c.test.ts': 7_000,
  });

  const inAnotherClone = ['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'].map((path) =>
    testFile('/clone-two', path),
  );
  expect(
    sequencer()
      .sort(inAnotherClone)
      .map((test) => test.path),
  ).toEqual(['/clone-two/test/b.test.ts', '/clone-two/test/c.test.ts', '/clone-two/test/a.test.ts']);
});

test('a file no run has timed yet goes before the timed ones (it may be long), and a missing or broken file of durations is an empty one', () => {
  writeFileSync(durations, '{ not json');
  const tests = [testFile('/clone', 'test/old.test.ts'), testFile('/clone', 'test/new.test.ts')];
  expect(() => sequencer().sort(tests)).not.toThrow();
  writeFileSync(durations, JSON.stringify({ 'test/old.test.ts': 60_000 }));
  expect(
    sequencer()
      .sort(tests)
      .map((test) => test.path),
  ).toEqual(['/clone/test/new.test.ts', '/clone/test/old.test.ts']);
});
