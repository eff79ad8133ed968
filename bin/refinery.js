#!/usr/bin/env node
// Runs the compiled engine from dist/ when it is up to date with src/; otherwise the TypeScript
// sources through tsx's loader, so a clone works right after `npm ci` and while developing.
import { existsSync, readdirSync, statSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.stamp');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

function distIsFresh() {
  if (process.env.REFINERY_FROM_SOURCE || !existsSync(stamp)) return false;
  // For benchmarks while sources are being edited: use the last build as it is.
  if (process.env.REFINERY_FROM_DIST) return true;
  // An installed package (no .git) is not edited in place: the walk over src/ and tasks/ (compiled
  // into dist/tasks/) is for a clone being developed.
  if (!existsSync(path.join(root, '.git'))) return true;
  const built = statSync(stamp).mtimeMs;
  return built >= newestMtime(path.join(root, 'src')) && built >= newestMtime(path.join(root, 'tasks'));
}

// V8's code cache for the modules below, where Node offers one (22.1 and later).
module.enableCompileCache?.();

let main;
if (distIsFresh()) {
  // The bundle (one file for the start path, a chunk per command) when the build made one.
  const bundle = path.join(root, 'dist', 'bundle', 'main.mjs');
  ({ main } = await import(existsSync(bundle) ? pathToFileURL(bundle).href : '../dist/src/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  globalThis[Symbol.for('refinery.tsx')] = true;
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
// An interrupted run is over once main returns: a task that ignored its abort signal (a timer, a
// request) must not keep the process alive. Both streams are drained first.
if (process.exitCode === 130) process.stdout.write('', () => process.stderr.write('', () => process.exit(130)));
