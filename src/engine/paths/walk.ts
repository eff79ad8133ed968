import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { globToRegExp, isGlob, staticPrefix } from './glob.ts';

const NEVER_ENTER = new Set(['.git', '.refinery', 'node_modules']);

export type EntryType = 'file' | 'dir' | 'any';

/** Told of every folder listed, with its mtime just before the listing (null when it could not be read). */
export type OnDirRead = (dir: string, mtimeMs: number | null) => void;

/**
 * Folders listed once for the patterns walked at one moment (a stage's inputs, a pipeline's
 * expansion), where several patterns walk the same folders: the analyze pipeline's summary
 * reads `analysis.json` of every turn and of every legacy log, and both patterns list every
 * log folder. The hook hears of each folder once.
 */
export class FolderListings {
  private readonly listed = new Map<string, Dirent[] | null>();

  constructor(
    private readonly root: string,
    private readonly onDirRead?: OnDirRead,
  ) {}

  /** A folder's entries (relative to the root, or absolute), null when it cannot be listed. */
  entries(rel: string): Dirent[] | null {
    const known = this.listed.get(rel);
    if (known !== undefined) return known;
    const at = path.isAbsolute(rel) ? rel : path.join(this.root, rel);
    if (this.onDirRead) {
      let mtime: number | null = null;
      try {
        mtime = statSync(at).mtimeMs;
      } catch {
        mtime = null;
      }
      this.onDirRead(rel, mtime);
    }
    let entries: Dirent[] | null;
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch {
      entries = null;
    }
    this.listed.set(rel, entries);
    return entries;
  }
}

/**
 * For each folder depth of a pattern's fixed-length head (the segments before a `**`, and
 * before its last one), what a folder's name must match there to hold a match. Undefined for a
 * pattern with braces, whose alternatives may hold a `/`.
 */
function folderSegments(pattern: string): Array<RegExp | undefined> | undefined {
  if (pattern.includes('{')) return undefined;
  const segments = pattern.split('/');
  const deep = segments.indexOf('**');
  // An absolute pattern's first segment is empty: the walk starts below it.
  return segments.slice(0, deep === -1 ? segments.length - 1 : deep).map((s) => (s === '' ? undefined : globToRegExp(s)));
}

/**
 * Paths (relative to root, or absolute for an absolute pattern; '/'-separated, sorted) matching
 * a glob; symlinks are never followed. A folder is entered only when its name can lead to a
 * match. `listing` is either the folders listed so far at this moment, shared with other
 * patterns, or a hook told of every folder listed.
 */
export function expandGlob(root: string, pattern: string, type: EntryType = 'file', listing?: FolderListings | OnDirRead): string[] {
  const normalized = path.posix.normalize(pattern).replace(/^\.\//, '');
  if (!isGlob(normalized)) return [normalized];
  const folders = listing instanceof FolderListings ? listing : new FolderListings(root, listing);
  const re = globToRegExp(normalized);
  const prefix = staticPrefix(normalized);
  const maxDepth = normalized.includes('**') ? Infinity : normalized.split('/').length;
  const heads = folderSegments(normalized);
  const results: string[] = [];
  const walk = (rel: string, depth: number): void => {
    const entries = folders.entries(rel);
    if (!entries) return;
    const head = heads?.[depth];
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) continue;
      const isDir = entry.isDirectory();
      if ((type === 'any' || (type === 'dir') === isDir) && re.test(child)) results.push(child);
      if (!isDir || depth + 1 >= maxDepth || (NEVER_ENTER.has(entry.name) && !prefix.includes(entry.name))) continue;
      if (head === undefined || head.test(entry.name)) walk(child, depth + 1);
    }
  };
  walk(prefix, prefix ? prefix.split('/').length : 0);
  return results.sort();
}
