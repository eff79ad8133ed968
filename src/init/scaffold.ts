import { linkSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ScaffoldFile } from './templates.ts';

export type FileOutcome = 'created' | 'overwritten' | 'kept' | 'unchanged' | 'failed';

export interface FileResult {
  path: string;
  outcome: FileOutcome;
  /** Why it failed (outcome 'failed'). */
  error?: string;
}

export interface GitignoreResult {
  added: string[];
  created: boolean;
  error?: string;
}

function readIfFile(file: string): string | undefined {
  try {
    if (!lstatSync(file).isFile()) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** A sibling staging file: the final name only ever holds a complete file. */
function staged(target: string, content: string): string {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.refinery-init`);
  writeFileSync(temp, content);
  return temp;
}

function writeOne(root: string, file: ScaffoldFile, force: boolean): FileResult {
  const target = path.join(root, ...file.path.split('/'));
  const current = readIfFile(target);
  if (current === file.content) return { path: file.path, outcome: 'unchanged' };
  const present = current !== undefined || exists(target);
  if (present && !force) return { path: file.path, outcome: 'kept' };
  let temp: string | undefined;
  try {
    mkdirSync(path.dirname(target), { recursive: true });
    temp = staged(target, file.content);
    if (present) {
      renameSync(temp, target);
      temp = undefined;
      return { path: file.path, outcome: 'overwritten' };
    }
    // link() fails if the name appeared meanwhile: a file created by someone else is never replaced.
    linkSync(temp, target);
    return { path: file.path, outcome: 'created' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return { path: file.path, outcome: 'kept' };
    return { path: file.path, outcome: 'failed', error: (error as Error).message };
  } finally {
    if (temp) rmSync(temp, { force: true });
  }
}

/** Writes each file that is missing (or differs, with `force`); an existing file is otherwise left as it is. */
export function writeScaffold(root: string, files: readonly ScaffoldFile[], options: { force: boolean }): FileResult[] {
  return files.map((file) => writeOne(root, file, options.force));
}

/** `.refinery`, `/.refinery/` and `.refinery/` all ignore the same folder. */
function normalizedPattern(line: string): string {
  return line.trim().replace(/^\//, '').replace(/\/$/, '');
}

/** Appends the lines .gitignore lacks; never rewrites or reorders the lines it has. */
export function ensureGitignore(root: string, lines: readonly string[]): GitignoreResult {
  const file = path.join(root, '.gitignore');
  const current = readIfFile(file);
  if (current === undefined && exists(file)) return { added: [], created: false, error: '.gitignore is not a regular file' };
  const have = new Set((current ?? '').split('\n').map(normalizedPattern));
  const added = lines.filter((line) => !have.has(normalizedPattern(line)));
  if (added.length === 0) return { added, created: false };
  const before = current ?? '';
  const content = `${before}${before !== '' && !before.endsWith('\n') ? '\n' : ''}${added.join('\n')}\n`;
  let temp: string | undefined;
  try {
    temp = staged(file, content);
    renameSync(temp, file);
    temp = undefined;
    return { added, created: current === undefined };
  } catch (error) {
    return { added: [], created: false, error: (error as Error).message };
  } finally {
    if (temp) rmSync(temp, { force: true });
  }
}
