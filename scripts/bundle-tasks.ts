// Compiles refinery's own tasks (tasks/*.ts) into dist/tasks/<name>.mjs at build time, each one
// file with the workflow code it imports, so that a run of a built-in pipeline from the built
// package loads plain JavaScript and never starts tsx's loader (its registration and its
// transpiling of each imported module cost a run more than the task's own work). Packages stay
// external, loaded from node_modules as the engine loads them. The .ts files stay the tasks'
// identity: stage hashes and workers' checks are computed from them
// (src/engine/executor/task-loader.ts picks the compiled file). Run by `npm run build`.
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';

const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    // A bare specifier (not a relative or absolute path): a package, or a Node.js builtin.
    b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
  },
};

const source = path.join(PACKAGE_ROOT, 'tasks');
const out = path.join(PACKAGE_ROOT, 'dist', 'tasks');
rmSync(out, { recursive: true, force: true });
const entryPoints = readdirSync(source)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => path.join('tasks', f));
await build({
  absWorkingDir: PACKAGE_ROOT,
  entryPoints,
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [externalPackages],
  outExtension: { '.js': '.mjs' },
  logLevel: 'warning',
});
process.stdout.write(`bundle-tasks: ${entryPoints.length} tasks in ${path.relative(PACKAGE_ROOT, out)}\n`);
