import { statfsSync } from 'node:fs';
import path from 'node:path';

/** A state or log file refinery could not write, for one clear line on the console. */
export interface WriteProblem {
  file: string;
  /** The errno code (ENOSPC, EACCES, ...), or 'unknown'. */
  code: string;
  /** What the code means, in words. */
  meaning: string;
}

const MEANINGS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
  ENOTDIR: 'a file is where a folder belongs',
  EISDIR: 'a folder is where a file belongs',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files on the system',
};

const FIXES: Record<string, string> = {
  ENOSPC: 'free some space and run again',
  EDQUOT: 'free some space or raise the quota and run again',
  EROFS: 'run refinery where the project can be written',
  EACCES: 'check the permissions of the project folder',
  EPERM: 'check the permissions of the project folder',
};

/** A failed file-system call, as opposed to a bug (which keeps its stack). */
export function isFsError(error: unknown): error is NodeJS.ErrnoException {
  const e = error as NodeJS.ErrnoException | undefined;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && typeof e.syscall === 'string';
}

export function writeProblem(file: string, error: unknown): WriteProblem {
  const code = isFsError(error) ? (error.code as string) : 'unknown';
  return { file, code, meaning: MEANINGS[code] ?? (error instanceof Error ? error.message : String(error)) };
}

function shown(root: string, file: string): string {
  const rel = path.relative(root, file);
  return rel && !rel.startsWith('..') ? rel : file;
}

/** "cannot write FILE: no space left on device (ENOSPC)" */
export function describeWriteProblem(problem: WriteProblem, root: string): string {
  return `cannot write ${shown(root, problem.file)}: ${problem.meaning}${problem.code !== 'unknown' ? ` (${problem.code})` : ''}`;
}

/**
 * One line per kind of failure, naming every file it hit and the fix: a full disk makes every
 * write fail, and one clear line says more than five similar ones.
 */
export function summarizeWriteProblems(problems: readonly WriteProblem[], root: string): string[] {
  const byCode = new Map<string, WriteProblem[]>();
  for (const p of problems) byCode.set(p.code, [...(byCode.get(p.code) ?? []), p]);
  return [...byCode.values()].map((group) => {
    const first = group[0] as WriteProblem;
    const files = [...new Set(group.map((p) => (p.file === root ? 'anything in the project' : shown(root, p.file))))];
    const fix = FIXES[first.code];
    return `${first.meaning}${first.code !== 'unknown' ? ` (${first.code})` : ''}: cannot write ${files.join(', ')}${fix ? `; ${fix}` : ''}`;
  });
}

/** A failed file-system call as one line, naming the file when the error does. */
export function describeFsError(error: NodeJS.ErrnoException, root: string): string {
  if (error.path) return describeWriteProblem(writeProblem(error.path, error), root);
  const code = error.code ?? 'unknown';
  return `${MEANINGS[code] ?? error.message} (${code}${error.syscall ? ` in ${error.syscall}` : ''})`;
}

/**
 * The file system holding the project is full: a command that failed for want of space may
 * have said only "exit code 1" (its own error message had nowhere to go).
 */
export function fullDiskProblem(root: string): WriteProblem | undefined {
  try {
    return statfsSync(root).bavail === 0 ? { file: root, code: 'ENOSPC', meaning: MEANINGS.ENOSPC as string } : undefined;
  } catch {
    return undefined;
  }
}
