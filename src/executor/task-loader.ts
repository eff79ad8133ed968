import { statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { TaskDefinition } from '../task/define-task.ts';

const loaded = new Map<string, Promise<TaskDefinition>>();
const checkedInRun = new Map<string, { runId: string; task: Promise<TaskDefinition> }>();
const TSX = Symbol.for('refinery.tsx');

/** TypeScript tasks need tsx's loader; it is registered once, only when a .ts task is loaded. */
async function ensureTypeScript(file: string): Promise<void> {
  const flags = globalThis as Record<symbol, unknown>;
  if (!/\.m?ts$/.test(file) || flags[TSX]) return;
  flags[TSX] = true;
  const { register } = await import('tsx/esm/api');
  register();
}

function isTaskDefinition(value: unknown): value is TaskDefinition {
  const v = value as Partial<TaskDefinition> | undefined;
  return typeof v === 'object' && v !== null && typeof v.run === 'function' && typeof v.name === 'string' && typeof v.params === 'object';
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
  try {
    // The file's stat names its version.
    const st = statSync(file);
    version = `${st.size.toString(36)}-${Math.round(st.mtimeMs * 1000).toString(36)}-${st.ino.toString(36)}`;
  } catch {
    /* the import below reports the missing file */
  }
  const key = `${file}?v=${version}`;
  let pending = loaded.get(key);
  if (!pending) {
    pending = ensureTypeScript(file).then(() => import(`${pathToFileURL(file).href}?v=${version}`)).then((mod: { default?: unknown }) => {
      if (!isTaskDefinition(mod.default)) throw new Error(`${file} must \`export default defineTask({ name, params, run })\``);
      return mod.default;
    });
    loaded.set(key, pending);
  }
  if (runId !== undefined) checkedInRun.set(file, { runId, task: pending });
  return pending;
}
