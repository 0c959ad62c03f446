// Carries ESLint's cache from one checkout to another (a fresh clone in CI), as test-all.sh carries
// the type check's state: `save <dir>` after a passing lint, `restore <dir>` before one. The cache
// names files by absolute path, so the checkout's root is written as a placeholder and put back.
// Each entry holds its file's content hash and a hash of ESLint's version and configuration (which
// therefore names no absolute path), so ESLint re-checks what changed. Its type-aware results
// (lambda/ and lib/) also depend on the files a file imports, which the cache does not track: they
// are carried only when none of those inputs changed, else those files are linted again.
// Prettier's cache is not carried: it hashes each file's absolute path into the entry.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ROOT = process.cwd();
const PLACEHOLDER = '<checkout>';
/** Where `npm run lint` keeps it (package.json). */
const CACHE = 'node_modules/.cache/eslint/cache.json';
/** The folders with type-aware rules; what those rules read: their files, the compiler options and the installed packages' types. */
const TYPED_FOLDERS = ['lambda', 'lib'];
const TYPED_INPUTS = [...TYPED_FOLDERS, 'tsconfig.json', 'package-lock.json', 'eslint.config.js'];

const [command, savedDir] = process.argv.slice(2);
if (!['save', 'restore'].includes(command) || !savedDir) {
  console.error('usage: node scripts/lint-cache.mjs save|restore <folder>');
  process.exit(2);
}
const saved = join(savedDir, 'eslint.json');
const typedInputsFile = join(savedDir, 'typed-inputs');

if (command === 'save') {
  mkdirSync(savedDir, { recursive: true });
  writeAtomically(saved, readFileSync(CACHE, 'utf8').replaceAll(ROOT, PLACEHOLDER));
  writeAtomically(typedInputsFile, typedInputsHash());
} else if (!existsSync(CACHE) && existsSync(saved)) {
  const typedCurrent = existsSync(typedInputsFile) && readFileSync(typedInputsFile, 'utf8') === typedInputsHash();
  let text = readFileSync(saved, 'utf8');
  // A stale typed entry is renamed to a path no file has, so ESLint lints the file again.
  if (!typedCurrent)
    for (const folder of TYPED_FOLDERS)
      text = text.replaceAll(`"${PLACEHOLDER}/${folder}/`, `"${PLACEHOLDER}-stale/${folder}/`);
  mkdirSync(dirname(CACHE), { recursive: true });
  writeFileSync(CACHE, text.replaceAll(PLACEHOLDER, ROOT));
}

function typedInputsHash() {
  const hash = createHash('sha256');
  const visit = (path) => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) visit(join(path, name));
    } else {
      hash.update(`${path}\0`).update(readFileSync(path)).update('\0');
    }
  };
  for (const input of TYPED_INPUTS) if (existsSync(input)) visit(input);
  return hash.digest('hex');
}

function writeAtomically(file, text) {
  writeFileSync(`${file}.${process.pid}`, text);
  renameSync(`${file}.${process.pid}`, file);
}
