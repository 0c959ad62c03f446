import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { PROJECT_ROOT } from './support/synth';

/**
 * Every package the code imports is declared in package.json: one that only arrives as another
 * package's dependency can change version or disappear with that package's next release.
 */
// The product's own folders and its tests.
const FOLDERS = ['lambda', 'lib', 'bin', 'scripts', 'test'];
const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
/** Names that are not packages: type-only modules of a declared `@types/` package, and the build's virtual modules. */
const provided = (name: string) => declared.has(`@types/${name}`) || name.startsWith('virtual:');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return /\.(ts|tsx|mjs|cjs|js)$/.test(entry.name) ? [full] : [];
  });
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

describe('package.json', () => {
  it('declares every package the code imports', () => {
    const undeclared: string[] = [];
    for (const file of FOLDERS.flatMap((folder) => sourceFiles(path.join(PROJECT_ROOT, folder)))) {
      for (const match of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const specifier = match[1] ?? match[2] ?? match[3] ?? match[4];
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
        const name = packageOf(specifier);
        if (!declared.has(name) && !provided(name)) undeclared.push(`${path.relative(PROJECT_ROOT, file)}: ${name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});
