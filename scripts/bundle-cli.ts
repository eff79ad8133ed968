// Bundles the CLI into dist/bundle/ at build time: main.mjs holds what every command needs
// (argument parsing, the no-op check of `run`); each command and each module loaded with a
// dynamic import() becomes a chunk of its own, loaded only when used, so a rarely used command
// costs nothing at start-up. Packages stay external (loaded from node_modules as before), but
// for the few a run that executes stages loads (BUNDLED).
// bin/refinery.js runs dist/bundle/main.mjs when dist is fresh. Run by `npm run build`. The
// files are .mjs: Node then knows them for ES modules from their name, where for each .js file it
// looks for the nearest package.json (~3 ms of a run's start for its 20 modules).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';

/**
 * p-queue and the two packages it imports: loaded from node_modules they cost ~7 ms of a run
 * (module resolution through three package.json files, and eventemitter3 as CommonJS), bundled
 * ~1.5 ms. Every other package stays external.
 */
const BUNDLED = new Set(['p-queue', 'eventemitter3', 'p-timeout']);

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    // A bare specifier (not a relative or absolute path): a package, or a Node.js builtin.
    b.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED.has(packageName(args.path)) ? undefined : { path: args.path, external: true }));
  },
};

const out = path.join(PACKAGE_ROOT, 'dist', 'bundle');
rmSync(out, { recursive: true, force: true });
const result = await build({
  absWorkingDir: PACKAGE_ROOT,
  entryPoints: { main: 'src/cli/main.ts' },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [externalPackages],
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  logLevel: 'warning',
  metafile: true,
});
process.stdout.write(`bundle-cli: ${Object.keys(result.metafile.outputs).length} files in ${path.relative(PACKAGE_ROOT, out)}\n`);
