/**
 * What the README, SECURITY.md and docs/ name exists: every relative link reaches a file and every
 * anchor a heading of its page; every repository path, npm script, management route, stack option
 * and proxy setting they name is one the project has, and every management route is documented. Nothing here
 * pins wording: moving a section, a file or a route cannot leave a page describing one that is gone.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import semver from 'semver';
import { API_ROUTES } from '../../lambda/api/router';
import { CONFIG_VARIABLES, SET_BY_THE_PLATFORM } from '../../lambda/wiring/config-variables';
import { readSettings } from '../../lib/settings';

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

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  engines: { node: string };
};
const ALL = PAGES.map((page) => [page, readFileSync(join(ROOT, page), 'utf8')] as const);

/** A management route as the pages write it: method and path, each `{name}` or `:name` segment as `{}`. */
const routeKey = (method: string, path: string) =>
  `${method} ${path.replace(/(?<=\/)(?:\{[^}/]+\}|:[A-Za-z]+)/g, '{}')}`;

/** The management routes a page names in code spans (`GET /api/logs`), without the proxy's own paths. */
function namedRoutes(markdown: string): string[] {
  return [...markdown.matchAll(/`(GET|POST|PUT|DELETE|PATCH) (\/api\/[^`\s?]*)/g)]
    .filter((m) => !m[2]!.startsWith('/api/proxy'))
    .map((m) => routeKey(m[1]!, m[2]!));
}

test('every management route a page names exists, and every route is named on a page', () => {
  const routes = new Set(API_ROUTES.map((route) => routeKey(route.method, route.path)));
  const named = ALL.flatMap(([page, text]) => namedRoutes(text).map((route) => [page, route] as const));
  expect(named.filter(([, route]) => !routes.has(route)).map(([page, route]) => `${page}: ${route}`)).toEqual([]);
  const documented = new Set(named.map(([, route]) => route));
  expect([...routes].filter((route) => !documented.has(route))).toEqual([]);
});

test('every npm script a page names is one package.json has', () => {
  const missing = ALL.flatMap(([page, text]) =>
    [...text.matchAll(/\bnpm (?:run ([\w:.-]+)|(start|test)\b)/g)]
      .map((m) => m[1] ?? m[2]!)
      .filter((script) => !(script in manifest.scripts))
      .map((script) => `${page}: npm run ${script}`),
  );
  expect(missing).toEqual([]);
});

test('every stack option a page passes with -c is one the stack reads', () => {
  const read = new Set<string>();
  readSettings({ tryGetContext: (key: string) => (read.add(key), key === 'enableBedrock' ? 'true' : undefined) });
  const unknown = ALL.flatMap(([page, text]) =>
    [...text.matchAll(/-c ([A-Za-z]+)=/g)]
      .map((m) => m[1]!)
      .filter((key) => !read.has(key))
      .map((key) => `${page}: ${key}`),
  );
  expect(unknown).toEqual([]);
});

test('every proxy setting a page names is one the proxy reads', () => {
  const settings = new Set([...CONFIG_VARIABLES.flatMap((v) => v.names), ...SET_BY_THE_PLATFORM]);
  // The proxy's own variables by their prefixes; other names on the pages are the reader's shell or AWS's.
  const own =
    /^(?:UPSTREAM|RATE|PROVIDER_KEY|FAILED|ALERT|STATS|LOG|DATA|DYNAMODB|CORS|PRICING|BEDROCK|TABLE|ADMIN)_[A-Z0-9_]+$/;
  const named = ALL.flatMap(([page, text]) =>
    [...text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => [page, m[1]!] as const).filter(([, name]) => own.test(name)),
  );
  expect(named.length).toBeGreaterThan(10);
  const unknown = named.filter(([, name]) => !settings.has(name)).map(([page, name]) => `${page}: ${name}`);
  expect(unknown).toEqual([]);
});

test('the Node.js version the pages require is the one package.json engines names', () => {
  const major = semver.minVersion(manifest.engines.node)!.major;
  const named = ALL.flatMap(([, text]) => [...text.matchAll(/Node\.js (\d+) or newer/g)].map((m) => Number(m[1])));
  expect(named.length).toBeGreaterThan(0);
  expect(named.filter((version) => version !== major)).toEqual([]);
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
