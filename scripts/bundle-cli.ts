// Bundles the CLI into dist/bundle/ at build time: main.js holds what every command needs
// (argument parsing, the no-op check of `run`); each command and each module loaded with a
// dynamic import() becomes a chunk of its own, loaded only when used, so a rarely used command
// costs nothing at start-up. Packages stay external (loaded from node_modules as before).
// bin/refinery.js runs dist/bundle/main.js when dist is fresh. Run by `npm run build`.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';

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
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  metafile: true,
});
process.stdout.write(`bundle-cli: ${Object.keys(result.metafile.outputs).length} files in ${path.relative(PACKAGE_ROOT, out)}\n`);
