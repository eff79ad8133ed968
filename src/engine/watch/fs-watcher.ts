import path from 'node:path';
import type { FileChange } from './types.ts';
import { ancestorDirs } from '../paths/ancestors.ts';
import { FolderTree, type WatchFolder } from './folder-tree.ts';

/** Directories never watched, wherever they sit: refinery's own state, dependencies, git. */
const NEVER = new Set(['.refinery', 'node_modules', '.git']);

export interface FsWatcherOptions {
  root: string;
  /** Root-relative paths of files or directories to watch, existing or not. */
  targets: Iterable<string>;
  onChange(change: FileChange): void;
  /** Any file-system notification under a watched folder, before the entry it names is looked at. */
  onActivity?(): void;
  /**
   * The same notification with the root-relative paths it may concern, in the kernel's order
   * (every watch shares one inotify queue): what a ChangeLedger is fed.
   */
  onRaw?(paths: string[]): void;
  /** A folder created after the first scan is watched from now on, or a watched one went away. */
  onFolder?(rel: string, kind: 'attached' | 'detached'): void;
  onError(error: Error): void;
  /** How a folder is watched (tests stand in a watch the system refuses). */
  watchFolder?: WatchFolder;
}

export interface FsWatcher {
  /** Resolves once the initial scan is done: from then on every change is reported. */
  readonly ready: Promise<void>;
  /** Replaces the watched targets (root-relative paths of files or directories, existing or not). */
  setTargets(targets: Iterable<string>): void;
  /**
   * Whether a change to this root-relative path is reported: it is a target, inside one, or on
   * the way to one, and the folder holding it is watched (the system may refuse a watch).
   */
  covers(rel: string): boolean;
  close(): Promise<void>;
}

/**
 * Watches a set of targets under the project root: the root, every folder on the way to a
 * target, and every folder inside one (folder-tree.ts), pruned of everything else. A target
 * that does not exist yet is seen when it is created, and nothing else in the project costs a
 * watch.
 */
export function startFsWatcher(options: FsWatcherOptions): FsWatcher {
  const root = path.resolve(options.root);
  const clean = (list: Iterable<string>): Set<string> =>
    new Set([...list].filter((t) => t !== '..' && !t.startsWith('../') && !path.isAbsolute(t)));
  let targets = clean(options.targets);
  let onTheWay = new Set([...targets].flatMap((t) => ancestorDirs(t)));
  // Asked for every entry met and every notification: answers are kept until the targets
  // change (a 10,000-file project asks tens of thousands of times).
  let answers = new Map<string, boolean>();
  const relevant = (rel: string): boolean => {
    let answer = answers.get(rel);
    if (answer === undefined) {
      answer = decide(rel);
      if (answers.size >= 200_000) answers = new Map();
      answers.set(rel, answer);
    }
    return answer;
  };
  const decide = (rel: string): boolean => {
    if (rel === '') return true;
    if (rel.split('/').some((s) => NEVER.has(s))) return false;
    if (targets.has('') || onTheWay.has(rel) || targets.has(rel)) return true;
    return ancestorDirs(rel).some((a) => targets.has(a));
  };
  const { onRaw, onActivity, onFolder } = options;
  const tree = new FolderTree(
    root,
    {
      relevant,
      onChange: (kind, rel) => {
        if (rel !== '' && relevant(rel)) options.onChange({ kind, path: rel });
      },
      onRaw: (folder, entry) => {
        onActivity?.();
        onRaw?.(rawPaths(folder, entry));
      },
      onFolder: (rel, kind) => onFolder?.(rel, kind),
      onError: options.onError,
    },
    options.watchFolder,
  );
  tree.attach('', true);
  return {
    ready: Promise.resolve(),
    setTargets(next) {
      const previous = targets;
      targets = clean(next);
      onTheWay = new Set([...targets].flatMap((t) => ancestorDirs(t)));
      answers = new Map();
      // Folders pruned before are listed again from the nearest one watched.
      const added = [...targets].filter((t) => !previous.has(t) && !ancestorDirs(t).some((a) => previous.has(a)));
      for (const folder of new Set(added.map((t) => tree.nearestWatched(path.posix.dirname(t))))) tree.rescan(folder);
      for (const t of added) tree.rescan(t);
    },
    covers: (rel) => relevant(rel) && tree.watches(rel),
    close: async () => tree.close(),
  };
}

/**
 * The paths a notification may concern: the entry it names and, when it names none or names
 * the folder's own base name (a folder's watch reports events on the folder itself that way),
 * the folder too.
 */
function rawPaths(folder: string, entry: string | undefined): string[] {
  if (entry === undefined || entry === '') return [folder];
  const inside = folder === '' ? entry : `${folder}/${entry}`;
  return path.posix.basename(folder) === entry ? [inside, folder] : [inside];
}
