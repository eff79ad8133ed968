// chokidar enters the project here and nowhere else.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { ChangeKind, FileChange } from './types.ts';
import { ancestorDirs } from '../paths/ancestors.ts';

/** Directories never watched, wherever they sit: refinery's own state, dependencies, git. */
const NEVER = new Set(['.refinery', 'node_modules', '.git']);

export interface FsWatcherOptions {
  root: string;
  /** Root-relative paths of files or directories to watch, existing or not. */
  targets: Iterable<string>;
  onChange(change: FileChange): void;
  /** Any file-system notification under a watched folder, before chokidar has looked at it (it stats first). */
  onActivity?(): void;
  /**
   * The same notification with the root-relative paths it may concern, in the kernel's order
   * (every watch shares one inotify queue): what a ChangeLedger is fed.
   */
  onRaw?(paths: string[]): void;
  /** A folder created after the first scan is watched from now on, or a watched one went away. */
  onFolder?(rel: string, kind: 'attached' | 'detached'): void;
  onError(error: Error): void;
}

export interface FsWatcher {
  /** Resolves once the initial scan is done: from then on every change is reported. */
  readonly ready: Promise<void>;
  /** Replaces the watched targets (root-relative paths of files or directories, existing or not). */
  setTargets(targets: Iterable<string>): void;
  /** Whether a change to this root-relative path is reported (it is a target, inside one, or on the way to one). */
  covers(rel: string): boolean;
  close(): Promise<void>;
}

/**
 * Watches a set of targets under the project root. chokidar is pointed at the root, and an
 * `ignored` filter prunes everything that is neither a target, inside one, nor a directory on
 * the way to one: a target that does not exist yet is seen when it is created, and nothing
 * else in the project costs a watch.
 */
export function startFsWatcher(options: FsWatcherOptions): FsWatcher {
  const root = path.resolve(options.root);
  const clean = (list: Iterable<string>): Set<string> =>
    new Set([...list].filter((t) => t !== '..' && !t.startsWith('../') && !path.isAbsolute(t)));
  let targets = clean(options.targets);
  let onTheWay = new Set([...targets].flatMap((t) => ancestorDirs(t)));
  // Asked by chokidar for every path it meets and by every notification: answers are kept
  // until the targets change (a 10,000-file project asks tens of thousands of times).
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
  const rootSlash = root.endsWith('/') ? root : `${root}/`;
  const relOf = (abs: string): string | undefined => {
    // The common case without path.relative's work: a normalized path under the root.
    if (path.sep === '/' && abs.startsWith(rootSlash) && !abs.includes('/.') && !abs.includes('//') && !abs.endsWith('/'))
      return abs.slice(rootSlash.length);
    const rel = path.relative(root, abs).split(path.sep).join('/');
    if (rel === '') return '';
    if (rel.startsWith('../') || rel === '..' || path.isAbsolute(rel)) return undefined;
    return rel;
  };
  const watcher: FSWatcher = watch(root, {
    ignoreInitial: true,
    persistent: true,
    followSymlinks: false,
    ignored: (abs: string) => {
      const rel = relOf(abs);
      return rel === undefined || !relevant(rel);
    },
  });
  const emit =
    (kind: ChangeKind) =>
    (abs: string): void => {
      const rel = relOf(abs);
      if (rel !== undefined && rel !== '' && relevant(rel)) options.onChange({ kind, path: rel });
    };
  for (const kind of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) watcher.on(kind, emit(kind));
  if (options.onActivity) watcher.on('raw', options.onActivity);
  const onRaw = options.onRaw;
  if (onRaw) watcher.on('raw', (_event: string, entry: unknown, details: unknown) => onRaw(rawPaths(relOf, entry, details)));
  const onFolder = options.onFolder;
  if (onFolder) {
    watcher.on('addDir', (abs: string) => {
      const rel = relOf(abs);
      if (rel) onFolder(rel, 'attached');
    });
    watcher.on('unlinkDir', (abs: string) => {
      const rel = relOf(abs);
      if (rel) onFolder(rel, 'detached');
    });
  }
  watcher.on('error', (error) => options.onError(error instanceof Error ? error : new Error(String(error))));
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    setTargets(next) {
      const previous = targets;
      targets = clean(next);
      onTheWay = new Set([...targets].flatMap((t) => ancestorDirs(t)));
      answers = new Map();
      // Directories pruned before are not walked again by themselves: point chokidar at new targets.
      const added = [...targets].filter((t) => !previous.has(t) && !ancestorDirs(t).some((a) => previous.has(a)));
      const existing = added.map((t) => nearestExisting(root, t)).filter((t): t is string => t !== undefined);
      if (existing.length > 0) watcher.add([...new Set(existing)]);
    },
    covers: (rel) => relevant(rel),
    close: () => watcher.close(),
  };
}

/**
 * The paths a raw notification may concern. A folder's watch names the entry that changed; a
 * file's own watch names the file by its base name, so a name equal to the watched path's base
 * name stands for both readings. No name at all: the watched path itself (and so all below it).
 */
function rawPaths(relOf: (abs: string) => string | undefined, entry: unknown, details: unknown): string[] {
  const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
  if (typeof watched !== 'string') return [];
  const base = relOf(path.resolve(watched));
  if (base === undefined) return [];
  if (typeof entry !== 'string' || entry === '') return [base];
  const inside = relOf(path.resolve(watched, entry));
  const out = inside === undefined ? [] : [inside];
  if (path.basename(watched) === entry || inside === undefined) out.push(base);
  return out;
}

function nearestExisting(root: string, rel: string): string | undefined {
  let candidate = rel;
  for (;;) {
    const abs = path.join(root, candidate);
    if (existsSync(abs)) return abs;
    const parent = path.posix.dirname(candidate);
    if (parent === '.' || parent === candidate) return root;
    candidate = parent;
  }
}
