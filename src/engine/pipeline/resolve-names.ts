import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

export { PACKAGE_ROOT };

const TASK_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

export interface NameResolver {
  taskFile(name: string): string | undefined;
  taskNames(): string[];
  schemaFile(name: string): string | undefined;
  schemaNames(): string[];
}

function listNames(dirs: string[], suffixes: string[]): string[] {
  const names = new Set<string>();
  for (const dir of dirs) {
    let entries: string[] = [];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const e of entries) {
      const suffix = suffixes.find((s) => e.endsWith(s));
      if (suffix && !e.endsWith('.d.ts')) names.add(e.slice(0, -suffix.length));
    }
  }
  return [...names].sort();
}

/** Looks in the project's tasks/ and schemas/ first, then in refinery's own. */
export function projectResolver(root: string): NameResolver {
  const taskDirs = [...new Set([path.join(root, 'tasks'), path.join(PACKAGE_ROOT, 'tasks')])];
  const schemaDirs = [...new Set([path.join(root, 'schemas'), path.join(PACKAGE_ROOT, 'schemas')])];
  const found = new Map<string, string | undefined>();
  return {
    taskFile(name) {
      if (found.has(name)) return found.get(name);
      let hit: string | undefined;
      for (const dir of taskDirs) {
        for (const ext of TASK_EXTENSIONS) {
          const file = path.join(dir, `${name}${ext}`);
          if (!hit && existsSync(file)) hit = file;
        }
      }
      found.set(name, hit);
      return hit;
    },
    taskNames: () => listNames(taskDirs, TASK_EXTENSIONS),
    schemaFile(name) {
      for (const dir of schemaDirs) {
        const file = path.join(dir, `${name}.schema.json`);
        if (existsSync(file)) return file;
      }
      return undefined;
    },
    schemaNames: () => listNames(schemaDirs, ['.schema.json']),
  };
}
