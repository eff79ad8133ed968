import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Where in its own file a task threw (`tasks/boom.ts:9:14`), from the error's stack: the first
 * frame in the task's file, as the author wrote it (tsx maps TypeScript positions back). Only
 * that frame: refinery's own frames say nothing to a task's author, and a whole stack trace is
 * not what a run prints. Undefined when the stack names no place in the file (the error was
 * made elsewhere, in a library the task called).
 */
export function taskErrorSite(error: unknown, taskFile: string, root: string): string | undefined {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return undefined;
  const names = [taskFile, pathToFileURL(taskFile).href];
  for (const line of stack.split('\n').slice(1)) {
    for (const name of names) {
      const at = line.indexOf(`${name}:`);
      if (at === -1) continue;
      const position = /^:(\d+):(\d+)/.exec(line.slice(at + name.length));
      if (position) return `${shown(taskFile, root)}:${position[1]}:${position[2]}`;
    }
  }
  return undefined;
}

/** The project's files relative to it; refinery's own tasks (outside it) by their full path. */
function shown(file: string, root: string): string {
  const relative = path.relative(root, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
