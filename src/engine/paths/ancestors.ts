import path from 'node:path';

/** The folders above a project-relative posix path, nearest first, not including the root (''). */
export function ancestorDirs(rel: string): string[] {
  const out: string[] = [];
  let dir = path.posix.dirname(rel);
  while (dir !== '.' && dir !== '/' && dir !== '') {
    out.push(dir);
    dir = path.posix.dirname(dir);
  }
  return out;
}
