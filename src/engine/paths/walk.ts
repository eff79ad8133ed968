import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { globToRegExp, isGlob, staticPrefix } from './glob.ts';

const NEVER_ENTER = new Set(['.git', '.refinery', 'node_modules']);

export type EntryType = 'file' | 'dir' | 'any';

/** Paths (relative to root, or absolute for an absolute pattern; '/'-separated, sorted) matching a glob; symlinks are never followed. */
/** `onDirRead(dir, mtimeMs)` is told of every folder listed, with its mtime just before the listing. */
export function expandGlob(
  root: string,
  pattern: string,
  type: EntryType = 'file',
  onDirRead?: (dir: string, mtimeMs: number | null) => void,
): string[] {
  const normalized = path.posix.normalize(pattern).replace(/^\.\//, '');
  const re = globToRegExp(normalized);
  const prefix = staticPrefix(normalized);
  const maxDepth = normalized.includes('**') ? Infinity : normalized.split('/').length;
  const results: string[] = [];
  // An absolute pattern (/etc/*.conf) is walked where it is, and matches absolute paths.
  const at = (rel: string): string => (path.isAbsolute(rel) ? rel : path.join(root, rel));
  const walk = (rel: string, depth: number): void => {
    let entries: Dirent[];
    if (onDirRead) {
      let mtime: number | null = null;
      try {
        mtime = statSync(at(rel)).mtimeMs;
      } catch {
        mtime = null;
      }
      onDirRead(rel, mtime);
    }
    try {
      entries = readdirSync(at(rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) continue;
      const isDir = entry.isDirectory();
      if ((type === 'any' || (type === 'dir') === isDir) && re.test(child)) results.push(child);
      if (isDir && depth + 1 < maxDepth && !(NEVER_ENTER.has(entry.name) && !prefix.includes(entry.name))) walk(child, depth + 1);
    }
  };
  if (!isGlob(normalized)) return [normalized];
  walk(prefix, prefix ? prefix.split('/').length : 0);
  return results.sort();
}
