import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from './support/synth';

/**
 * The folders of lambda/ form no import cycle (docs/architecture.md, "Dependencies between folders"): a folder may
 * use the folders below it, never one that uses it back. scripts/check-cycles.mjs
 * derives the folder graph from the relative imports; this runs it.
 */
const check = (root?: string) =>
  spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts/check-cycles.mjs'), ...(root ? [root] : [])], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  });

describe('folder import cycles', () => {
  it('lambda/ has none', () => {
    const result = check();
    // On failure the output names each cycle and one import that closes it.
    expect(result.stdout).not.toContain('cycle:');
    expect(result.stdout).toContain('no folder cycles');
    expect(result.status).toBe(0);
  });

  describe('the check itself', () => {
    let tree: string;
    const write = (file: string, text: string) => {
      mkdirSync(join(tree, file, '..'), { recursive: true });
      writeFileSync(join(tree, file), text);
    };
    beforeEach(() => {
      tree = mkdtempSync(join(tmpdir(), 'folder-cycles-'));
    });
    afterEach(() => rmSync(tree, { recursive: true, force: true }));

    it('finds a cycle through three folders, by static and dynamic imports, and names an import that closes it', () => {
      write('a/one.ts', "import { two } from '../b/two';\nexport const one = two;\n");
      write('b/two.ts', "export { three as two } from '../c/three';\n");
      write('c/three.ts', "export const three = () => import('../a/one');\n");
      write('d/leaf.ts', "import { one } from '../a/one';\nexport const leaf = one;\n");
      const result = check(tree);
      expect(result.status).toBe(1);
      expect(result.stdout).toContain('cycle: a ↔ b ↔ c');
      expect(result.stdout).toContain('c → a: c/three.ts → ../a/one');
      expect(result.stdout).not.toMatch(/cycle:.*\bd\b/);
    });

    it('a file at the top level is a node of its own, and imports inside one folder are no edge', () => {
      write('config.ts', "import { TABLES } from './store/tables';\nexport const config = TABLES;\n");
      write('store/tables.ts', "import { helper } from './helper';\nexport const TABLES = helper;\n");
      write('store/helper.ts', 'export const helper = 1;\n');
      expect(check(tree).status).toBe(0);
      write('store/admin-key.ts', "import { config } from '../config';\nexport const key = config;\n");
      const result = check(tree);
      expect(result.status).toBe(1);
      expect(result.stdout).toContain('cycle: config ↔ store');
    });
  });
});
