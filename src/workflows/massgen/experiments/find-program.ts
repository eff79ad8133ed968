import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** A file this process may execute (a folder with its x bit set is not one). */
export function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Where a program name (or path) is looked for, as a shell would: a path as it is (from `root`),
 * a bare name in each PATH folder in order. `looked` holds every place tried up to and including
 * the one it was `found` in.
 */
export function lookUpProgram(program: string, env: NodeJS.ProcessEnv, root: string): { looked: string[]; found?: string } {
  const candidates = program.includes('/')
    ? [path.resolve(root, program)]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => path.join(path.resolve(root, dir), program));
  const looked: string[] = [];
  for (const candidate of candidates) {
    looked.push(candidate);
    if (isExecutableFile(candidate)) return { looked, found: candidate };
  }
  return { looked };
}

/** Whether a program name (or path) can be started: a path that is executable, or a name found on PATH. */
export function findProgram(program: string, env: NodeJS.ProcessEnv, root = process.cwd()): boolean {
  return lookUpProgram(program, env, root).found !== undefined;
}
