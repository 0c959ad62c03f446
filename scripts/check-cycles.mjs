// Folder-level import graph of lambda/ (or of the folder given as the first argument): each top-level
// folder (and each file directly in it) is a node; a relative import from one node into another is an
// edge. Prints every cycle (strongly connected group of more than one node) with one import that closes
// it, and exits 1 when there is any.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// The folder to check: lambda/ unless a path is given (the cycle test checks a made-up tree too).
const ROOT = process.argv[2] ? resolve(process.argv[2]) : resolve(dirname(fileURLToPath(import.meta.url)), '../lambda');
const IMPORT = /(?:import|export)\s[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g;

const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')
        ? [join(dir, e.name)]
        : [],
  );
const nodeOf = (file) =>
  relative(ROOT, file)
    .split(sep)[0]
    .replace(/\.tsx?$/, '');

const edges = new Map(); // node → Map(target → example "file → specifier")
for (const file of files(ROOT)) {
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = resolve(dirname(file), m[1] ?? m[2]);
    if (relative(ROOT, target).startsWith('..')) continue;
    const from = nodeOf(file);
    const to = nodeOf(target);
    if (from === to) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(ROOT, file)} → ${m[1] ?? m[2]}`);
  }
}

// Tarjan's strongly connected components.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const groups = [];
function visit(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) groups.push(group.sort());
  }
}
for (const v of edges.keys()) if (!idx.has(v)) visit(v);

if (groups.length === 0) {
  console.log(
    `${relative(process.cwd(), ROOT) || '.'}/: no folder cycles (${edges.size} folders and files with imports)`,
  );
} else {
  for (const group of groups) {
    console.log(`cycle: ${group.join(' ↔ ')}`);
    for (const from of group)
      for (const [to, example] of edges.get(from)) if (group.includes(to)) console.log(`  ${from} → ${to}: ${example}`);
  }
  process.exitCode = 1;
}
