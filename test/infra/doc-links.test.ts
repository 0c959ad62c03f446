/**
 * The README and docs/ link to each other by relative paths and section anchors: every link to a
 * file of this repository names a file that exists, and every anchor names a heading of its page,
 * so moving a section cannot leave a reader at a dead link. The files of the repository a page names
 * in code spans exist too, so moving a file cannot leave a page describing one that is gone.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const PAGES = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every `[text](target)` of a page whose target is not a web address, outside code blocks. */
function localLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

/** The product's pages and code: only their contents are read here (a link elsewhere must still reach a file). */
const PRODUCT_FOLDERS = ['lambda', 'lib', 'bin', 'test', 'scripts', 'docs'].map((folder) => join(ROOT, folder));
const isProductFile = (file: string) =>
  dirname(file) === ROOT || PRODUCT_FOLDERS.some((folder) => file.startsWith(`${folder}/`));

/** Repository paths a page names in code spans (`lambda/…`, `test/…`), without placeholders. */
function namedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`((?:lambda|lib|bin|test|scripts|docs)\/[^`\s]*)`/g)].map((m) => m[1]!);
  return [...new Set(spans)].filter((path) => !/[<>{}*…]/.test(path));
}

describe.each(PAGES)('%s', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8');

  test('every relative link reaches a file of the repository, and every anchor a heading of its page', () => {
    const broken = localLinks(text).filter((target) => {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
      if (!file.startsWith(ROOT) || !existsSync(file)) return true;
      if (anchor === undefined || !isProductFile(file)) return false;
      return !statSync(file).isFile() || !anchorsOf(readFileSync(file, 'utf8')).has(anchor);
    });
    expect(broken.map((target) => `${page} → ${target}`)).toEqual([]);
  });

  test('every file or folder of the repository it names exists', () => {
    const missing = namedPaths(text).filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });
});

test('the anchors are computed as GitHub computes them', () => {
  expect([...anchorsOf('## `/api/stats` periods\n## Use it with…\n## The store (DynamoDB)\n## A\n## A\n')]).toEqual([
    'apistats-periods',
    'use-it-with',
    'the-store-dynamodb',
    'a',
    'a-1',
  ]);
});

test('every docs/ page is linked from the README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const linked = new Set(localLinks(readme).map((target) => relative(ROOT, resolve(ROOT, target.split('#')[0]!))));
  expect(PAGES.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
});
