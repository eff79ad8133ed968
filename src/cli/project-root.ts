import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const MARKERS = ['refinery.config.yaml', 'pipelines', '.refinery'];
const BOUNDARIES = ['package.json', '.git'];

/**
 * The project a command started in a subfolder belongs to, found as git and npm find theirs:
 * the nearest folder up from `cwd` with a refinery marker (refinery.config.yaml, pipelines/,
 * .refinery/). The climb stops at the first folder with package.json or .git, which is then the
 * root; with neither anywhere, `cwd` itself is.
 */
export function findProjectRoot(cwd: string): string {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (MARKERS.some((m) => existsSync(path.join(dir, m)))) return dir;
    if (BOUNDARIES.some((m) => existsSync(path.join(dir, m)))) return dir;
    if (path.dirname(dir) === dir) return cwd;
  }
}

/** Why `dir` cannot be a project root, or undefined when it can. */
export function directoryProblem(dir: string): string | undefined {
  try {
    return statSync(dir).isDirectory() ? undefined : 'not a folder';
  } catch {
    return 'no such folder';
  }
}
