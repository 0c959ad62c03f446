/** Type-checking code as a user's project would compile it, for the tests of the README's and the dashboard's examples. */
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '../..');

/**
 * The problems strict TypeScript finds in `files` as ES modules (Node's module resolution, so the
 * SDKs come from a node_modules beside them), each as `file: message` with `dir` cut from the name.
 */
export function typeCheckAsUserModules(files: string[], dir: string): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    typeRoots: [join(ROOT, 'node_modules/@types')],
    types: ['node'],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName.replace(dir, '') ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}
