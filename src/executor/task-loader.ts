import { pathToFileURL } from 'node:url';
import type { TaskDefinition } from '../task/define-task.ts';

const loaded = new Map<string, Promise<TaskDefinition>>();

function isTaskDefinition(value: unknown): value is TaskDefinition {
  const v = value as Partial<TaskDefinition> | undefined;
  return typeof v === 'object' && v !== null && typeof v.run === 'function' && typeof v.name === 'string' && typeof v.params === 'object';
}

/** Imports a task module once; its default export must be a defineTask() result. */
export function loadTask(file: string): Promise<TaskDefinition> {
  let pending = loaded.get(file);
  if (!pending) {
    pending = import(pathToFileURL(file).href).then((mod: { default?: unknown }) => {
      if (!isTaskDefinition(mod.default)) throw new Error(`${file} must \`export default defineTask({ name, params, run })\``);
      return mod.default;
    });
    loaded.set(file, pending);
  }
  return pending;
}
