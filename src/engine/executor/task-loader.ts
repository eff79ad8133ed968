import { realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TaskDefinition } from '../../task/define-task.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

const loaded = new Map<string, Promise<TaskDefinition>>();
const checkedInRun = new Map<string, { runId: string; task: Promise<TaskDefinition> }>();
const TSX = Symbol.for('refinery.tsx');
const TSX_CJS = Symbol.for('refinery.tsx-cjs');
const requireCache = createRequire(import.meta.url).cache;

/**
 * Tasks may be TypeScript, and `refinery/task` itself is TypeScript, so tsx's loaders are
 * registered (once, when the first task is loaded) whatever the task file's extension. Both
 * hooks are needed: in a package without `"type": "module"` tsx compiles a task to CommonJS,
 * and its `require('refinery/task')` bypasses the ESM hook.
 */
async function ensureTypeScript(): Promise<void> {
  const flags = globalThis as Record<symbol, unknown>;
  if (!flags[TSX]) {
    flags[TSX] = true;
    const { register } = await import('tsx/esm/api');
    register();
  }
  if (!flags[TSX_CJS]) {
    flags[TSX_CJS] = true;
    const { register } = await import('tsx/cjs/api');
    register();
  }
}

/**
 * refinery's own tasks compiled to JavaScript by the build (scripts/bundle-tasks.ts), used when
 * this engine runs from dist/: bin/refinery.js runs dist/ only when it is as new as src/ and
 * tasks/, so the compiled file is the source's. From source (a clone being developed, the tests
 * of src/), tasks are loaded as they are.
 */
const DIST = path.join(PACKAGE_ROOT, 'dist');
const COMPILED_TASKS = fileURLToPath(import.meta.url).startsWith(DIST + path.sep) ? path.join(DIST, 'tasks') : undefined;
const BUILT_IN_TASKS = path.join(PACKAGE_ROOT, 'tasks');

/** The file a task is imported from: a built-in task's compiled twin when there is one, else the file itself. */
function runnableTaskFile(file: string): string {
  if (COMPILED_TASKS === undefined || path.dirname(file) !== BUILT_IN_TASKS || !file.endsWith('.ts')) return file;
  const compiled = path.join(COMPILED_TASKS, `${path.basename(file, '.ts')}.mjs`);
  // A task edited since the build (a watch started from dist in a clone being developed) runs from its source.
  const built = statSync(compiled, { throwIfNoEntry: false });
  const source = statSync(file, { throwIfNoEntry: false });
  return built && source && built.mtimeMs >= source.mtimeMs ? compiled : file;
}

function isTaskDefinition(value: unknown): value is TaskDefinition {
  const v = value as Partial<TaskDefinition> | undefined;
  return typeof v === 'object' && v !== null && typeof v.run === 'function' && typeof v.name === 'string' && typeof v.params === 'object';
}

/** The module's `export default`: for a task compiled to CommonJS, import() sees `exports` as the default. */
function defaultExport(mod: { default?: unknown }): unknown {
  if (isTaskDefinition(mod.default)) return mod.default;
  const inner = (mod.default as { default?: unknown } | undefined)?.default;
  return isTaskDefinition(inner) ? inner : mod.default;
}

/**
 * Imports a task module once per version of its file: an edited task file (while `refinery
 * watch` runs) is imported again under a new URL; its default export must be a defineTask() result.
 */
export function loadTask(file: string, runId?: string): Promise<TaskDefinition> {
  // Within one run a task file is looked at once; each run (a watch cycle too) looks again.
  const checked = checkedInRun.get(file);
  if (runId !== undefined && checked?.runId === runId) return checked.task;
  let version = '';
  let realFile = file;
  try {
    // The file's stat names its version.
    const st = statSync(file);
    version = `${st.size.toString(36)}-${Math.round(st.mtimeMs * 1000).toString(36)}-${st.ino.toString(36)}`;
    realFile = realpathSync(file);
  } catch {
    /* the import below reports the missing file */
  }
  const key = `${file}?v=${version}`;
  let pending = loaded.get(key);
  if (!pending) {
    // A task compiled to CommonJS lives in require's cache, keyed by its path alone: drop it, or
    // an edited file would be imported under its new URL but run the old code.
    delete requireCache[realFile];
    const runnable = runnableTaskFile(file);
    // A compiled task is plain JavaScript: tsx's loaders are not started for it.
    pending = (runnable === file ? ensureTypeScript() : Promise.resolve())
      .then(() => import(`${pathToFileURL(runnable).href}?v=${version}`))
      .then((mod: { default?: unknown }) => {
        const task = defaultExport(mod);
        if (!isTaskDefinition(task)) throw new Error(`${file} must \`export default defineTask({ name, params, run })\``);
        return task;
      });
    loaded.set(key, pending);
  }
  if (runId !== undefined) checkedInRun.set(file, { runId, task: pending });
  return pending;
}
