import path from 'node:path';

/** A path from params, resolved inside `root`; throws a clear error when it escapes (no traversal). */
export function resolveInside(root: string, given: string, what: string): string {
  if (given.includes('\0')) throw new Error(`${what} '${given}': contains a NUL byte`);
  const absolute = path.resolve(root, given);
  const relative = path.relative(root, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative))
    throw new Error(`${what} '${given}': resolves outside the project root ${root}; give a path inside the project`);
  return absolute;
}
