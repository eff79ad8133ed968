import { mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';

const realRoots = new Map<string, string>();

/** The project root with every symlink resolved (it may itself be reached through one). */
function realRoot(root: string): string {
  let real = realRoots.get(root);
  if (real === undefined) {
    real = realpathSync.native(root);
    realRoots.set(root, real);
  }
  return real;
}

function isInside(real: string, rootReal: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(path.sep) ? rootReal : `${rootReal}${path.sep}`);
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

interface Located {
  problem?: string;
  /** The problem is that the folder leads outside the project. */
  outside?: boolean;
  /** The output's folder itself exists (not only one above it). */
  exists: boolean;
}

function locate(root: string, rel: string): Located {
  const rootReal = realRoot(root);
  const folder = path.posix.dirname(rel);
  let dir = folder;
  for (;;) {
    let real: string;
    try {
      real = realpathSync.native(path.join(root, dir));
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' && dir !== '.') {
        dir = path.posix.dirname(dir);
        continue;
      }
      if (code === 'ENOTDIR')
        return { problem: `a file is in the way of folder ${dir}; remove it or give the output another path`, exists: false };
      return { problem: `cannot resolve folder ${dir}: ${code ?? (error as Error).message}`, exists: false };
    }
    if (!isInside(real, rootReal))
      return {
        outside: true,
        problem: `is under ${dir}, which leads to ${real}, outside the project (${rootReal}); outputs are written only inside the project: make ${dir} a folder of the project or give the output another path`,
        exists: false,
      };
    return { exists: dir === folder };
  }
}

/**
 * Checks where the folder of a project-relative output really is: the nearest folder that
 * exists, every symlink followed, must be inside the project's real root. Returns undefined
 * when it is, else a message naming the folder and where it leads (`outside`), or what is in
 * the way.
 */
export function outputFolderProblem(root: string, rel: string): { message: string; outside: boolean } | undefined {
  const { problem, outside } = locate(root, rel);
  return problem === undefined ? undefined : { message: problem, outside: outside === true };
}

/**
 * Makes the folder of an output, refusing one that resolves outside the project: checked
 * before any folder is made (a missing folder under a link to elsewhere would be made there)
 * and again once made.
 */
export function makeOutputFolder(root: string, rel: string): string | undefined {
  const before = locate(root, rel);
  if (before.problem || before.exists) return before.problem;
  const dir = path.posix.dirname(rel);
  try {
    mkdirSync(path.join(root, dir), { recursive: true });
  } catch (error) {
    const code = errnoCode(error);
    return code === 'EEXIST' || code === 'ENOTDIR'
      ? `cannot make folder ${dir}: a file is in the way; remove it or give the output another path`
      : `cannot make folder ${dir}: ${code ?? (error as Error).message}`;
  }
  return locate(root, rel).problem;
}

/** A path an expression asked about (`exists()`) that is neither inside the project nor inside a folder a param names. */
export class OutsideProjectError extends Error {}

/** The folders a pipeline's params name (`--param logs=/data/logs`): expressions may look inside them too. */
export function paramFolders(params: Readonly<Record<string, unknown>>): string[] {
  return Object.values(params).filter((v): v is string => typeof v === 'string' && v !== '');
}

function realOf(dir: string): string | undefined {
  try {
    return realpathSync.native(dir);
  } catch {
    return undefined;
  }
}

/**
 * `exists(rel)` of an expression: whether the path is there, looking only inside the project,
 * or inside a folder a param names (`folders`: logs given as `--param logs=/data/logs` are
 * probed where they are, as the stage reading them does). Any other path (absolute, a `..` out
 * of those folders, or through a symlink leading out of them) is refused with an
 * OutsideProjectError, which fails the expression, rather than answered: an answer would tell
 * what lies outside.
 */
export function existsInProject(root: string, rel: string, folders: readonly string[] = []): boolean {
  const refuse = (why: string) =>
    new OutsideProjectError(
      `exists('${rel}'): ${why}; expressions look only inside the project (and inside folders its params name): give a path relative to the project root`,
    );
  const lexical = path.resolve(root, rel);
  const bases = [path.resolve(root), ...folders.map((f) => path.resolve(root, f))].filter((b) => isInside(lexical, b));
  if (bases.length === 0) throw refuse(path.isAbsolute(rel) ? 'an absolute path outside the project' : 'a path out of the project');
  // The nearest part of it that is there, every symlink followed, must still be in one of them.
  for (let p = lexical; bases.some((b) => isInside(p, b)); p = path.dirname(p)) {
    let real: string;
    try {
      real = realpathSync.native(p);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      return false;
    }
    const inside = bases.some((b) => {
      const realBase = b === path.resolve(root) ? realRoot(root) : realOf(b);
      return realBase !== undefined && isInside(real, realBase);
    });
    if (!inside) throw refuse(`it leads to ${real}, outside the project`);
    return p === lexical;
  }
  // Not even the folder a param names is there.
  return false;
}
