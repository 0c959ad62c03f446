/**
 * SECURITY.md lists each promise with the test that proves it: every promise (a bullet that opens
 * with a bold claim, outside "Not promised" and the list of what is not covered) names, after its
 * arrow, at least one test file, and every test file the page names exists. A promise added without
 * its test, or a test renamed without its promise, fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const page = readFileSync(join(ROOT, 'SECURITY.md'), 'utf8');

/** Sections whose bullets are not promises. */
const NOT_PROMISES = new Set(['Not promised', 'Reporting a vulnerability']);

interface Promise_ {
  section: string;
  claim: string;
  text: string;
}

/** Each bullet of a section, with its continuation lines, that opens with a bold claim. */
function promisesOf(markdown: string): Promise_[] {
  const promises: Promise_[] = [];
  let section = '';
  let current: Promise_ | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^## +(.+)$/.exec(line);
    if (heading) {
      section = heading[1]!;
      current = undefined;
      continue;
    }
    const bullet = /^- \*\*(.+?)\*\*/.exec(line);
    if (bullet) {
      current = { section, claim: bullet[1]!, text: line };
      if (!NOT_PROMISES.has(section) && !/^Not covered/.test(current.claim)) promises.push(current);
      continue;
    }
    if (current && /^ {2}\S/.test(line)) current.text += `\n${line}`;
    else if (!line.startsWith(' ')) current = undefined;
  }
  return promises;
}

/** The test files a text names in code spans. */
const testFilesIn = (text: string) => [...text.matchAll(/`(test\/[^`\s]+\.test\.ts)`/g)].map((m) => m[1]!);

const promises = promisesOf(page);

test('the page has its promises (the reading of it still works)', () => {
  expect(promises.length).toBeGreaterThanOrEqual(30);
  expect(promises.map((p) => p.section)).toEqual(
    expect.arrayContaining(['Keys', 'Tokens', 'What is scrubbed where', 'Accounts', 'The network', 'Hostile input']),
  );
});

test.each(promises.map((p) => [`${p.section}: ${p.claim}`, p] as const))(
  '%s → names the test that proves it, after its arrow',
  (_name, promise) => {
    const arrow = promise.text.indexOf('→');
    expect(arrow).toBeGreaterThan(0);
    expect(testFilesIn(promise.text.slice(arrow))).not.toHaveLength(0);
  },
);

test('every test file the page names exists', () => {
  const named = [...new Set(testFilesIn(page))];
  expect(named.length).toBeGreaterThan(10);
  expect(named.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
});
