// What a build is made from, as a fingerprint: every file under lambda/ (path, size, modification
// time), the build scripts, package.json and the installed dependencies' lock. `npm start` rebuilds
// only when the fingerprint differs from the one the last build wrote, so a second start skips the
// build (a few seconds of two cores) while any edit, new file or `npm install` still triggers one.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const FILES = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'scripts/build.mjs'];
const FOLDERS = ['lambda', 'scripts'];
const STAMP = 'dist/.build-inputs';

function* walk(root, folder) {
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* walk(root, path);
    } else yield path;
  }
}

/** The fingerprint of the sources and settings a build of `root` reads. */
export function buildInputs(root, settings = {}) {
  const hash = createHash('sha256').update(JSON.stringify(settings));
  const paths = [...FILES, ...FOLDERS.flatMap((folder) => [...walk(root, folder)])].sort();
  for (const path of paths) {
    const full = join(root, path);
    if (!existsSync(full)) continue;
    const { size, mtimeMs } = statSync(full);
    hash.update(`${relative(root, full)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Whether dist/ was built from exactly these inputs. */
export function isBuildCurrent(root, fingerprint) {
  const stamp = join(root, STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === fingerprint;
}

export function recordBuildInputs(root, fingerprint) {
  writeFileSync(join(root, STAMP), fingerprint);
}
