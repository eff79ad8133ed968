import { lstatSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';

/** Where a loader reports a state file it had to set aside; the CLI prints it as a warning. */
export type StateWarn = (message: string) => void;

function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:.]/g, '');
}

function shown(root: string, file: string): string {
  const rel = path.relative(root, file);
  return rel && !rel.startsWith('..') ? rel : file;
}

/**
 * Moves an unreadable state file (or whatever sits where a state folder belongs) to
 * `<name>.corrupt-<time>`, so the run can go on as if it were absent and nothing is lost for
 * whoever wants to look at it. Returns the sentence to show; never throws.
 */
export function setAside(root: string, file: string, problem: string, consequence = 'going on as if it were absent'): string {
  const target = `${file}.corrupt-${timestamp(new Date())}`;
  try {
    renameSync(file, target);
    return `${shown(root, file)} ${problem}: set aside as ${shown(root, target)}; ${consequence}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (code === 'ENOENT') return `${shown(root, file)} ${problem}; it is gone now; ${consequence}`;
    return `${shown(root, file)} ${problem}, and it could not be set aside (${code}): remove it by hand; ${consequence}`;
  }
}

/** Renames a corrupt file and reports it, when there is someone to report to. */
export function setAsideAndWarn(root: string, file: string, problem: string, warn: StateWarn | undefined, consequence?: string): void {
  const message = setAside(root, file, problem, consequence);
  warn?.(message);
}

function isFolder(p: string): boolean | undefined {
  try {
    return statSync(p).isDirectory();
  } catch {
    // A dangling symlink is something in the way too; nothing at all is not.
    try {
      lstatSync(p);
      return false;
    } catch {
      return undefined;
    }
  }
}

/**
 * Makes a folder under `.refinery/`; a file found where one of its folders belongs (say
 * `.refinery/runs` replaced by a file) is set aside first. Throws only what mkdir throws
 * for other reasons (no space, no permission).
 */
export function ensureStateDir(root: string, dir: string, warn?: StateWarn): void {
  try {
    mkdirSync(dir, { recursive: true });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw error;
  }
  const base = path.join(root, '.refinery');
  const rel = path.relative(base, dir);
  const parts = rel && !rel.startsWith('..') ? rel.split(path.sep) : [];
  let current = base;
  for (const part of ['', ...parts]) {
    current = part ? path.join(current, part) : current;
    if (isFolder(current) === false) {
      setAsideAndWarn(root, current, 'is not a folder', warn, 'a new folder takes its place');
      break;
    }
  }
  mkdirSync(dir, { recursive: true });
}
