// Jest's order of test files: the longest first, so that no long file starts late and runs alone
// at the end while the other workers sit idle. Jest does this itself from the durations of the last
// run, but keeps them by absolute path in its cache, so a fresh clone (every CI run) starts without
// them and falls back to file size, which puts the browser journeys (small files, minutes of
// Chromium) last. This sequencer also keeps each file's last duration by its path in the
// repository, in the user's cache folder, and uses it where jest has none.
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { dirname, join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const DURATIONS = join(
  process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
  'ai-usage-proxy',
  'test-durations.json',
);

/** The repository path of a test file, the same in every clone. */
const pathIn = (test) => relative(test.context.config.rootDir, test.path);

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

class LongestFirst extends Sequencer {
  remembered = readDurations();

  time(test) {
    return super.time(test) ?? this.remembered[pathIn(test)];
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    const byPath = new Map(tests.map((test) => [test.path, test]));
    for (const result of results.testResults) {
      const test = byPath.get(result.testFilePath);
      const { start, end } = result.perfStats;
      if (test && !result.skipped && end > start) this.remembered[pathIn(test)] = end - start;
    }
    try {
      mkdirSync(dirname(DURATIONS), { recursive: true });
      // Written whole, then renamed: a run stopped midway never leaves half a file.
      writeFileSync(`${DURATIONS}.${process.pid}`, JSON.stringify(this.remembered));
      renameSync(`${DURATIONS}.${process.pid}`, DURATIONS);
    } catch {
      // Only an order for next time: a read-only home folder costs nothing else.
    }
  }
}

module.exports = LongestFirst;
