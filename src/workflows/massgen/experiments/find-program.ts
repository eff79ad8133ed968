import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Whether a program name (or path) can be started: a path that is executable, or a name found on PATH. */
export function findProgram(program: string, env: NodeJS.ProcessEnv, root = process.cwd()): boolean {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (program.includes('/')) return executable(path.resolve(root, program));
  return (env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && executable(path.join(dir, program)));
}
