// The watch daemon's watches of the project's folders are all made here (the cookie barrier
// keeps one plain watch of its own folder; the dashboard watches its run logs by itself).
import { type Dirent, type FSWatcher, lstatSync, readdirSync, watch } from 'node:fs';
import path from 'node:path';
import type { ChangeKind } from './types.ts';

/** How a folder is watched: Node's fs.watch, or a stand-in in tests (a watch the system refuses). */
export type WatchFolder = (folder: string, listener: (event: string, name: string | Buffer | null) => void) => FSWatcher;

const watchFolder: WatchFolder = (folder, listener) => watch(folder, { persistent: true }, listener);

/** What the tree reports; paths are root-relative with '/' separators ('' is the root). */
export interface FolderTreeEvents {
  /** Whether a path is watched (a folder) or reported (a file); asked for every entry met. */
  relevant(rel: string): boolean;
  /** A change found by looking at the entry a notification named. */
  onChange(kind: ChangeKind, rel: string): void;
  /**
   * A notification, before anything is looked at: the folder it came from and the entry it
   * named (undefined when it named none), in the kernel's order (every watch of a process
   * shares one inotify queue).
   */
  onRaw(folder: string, entry: string | undefined): void;
  /** A folder found after the first scan is watched from now on, or a watched one went away. */
  onFolder(rel: string, kind: 'attached' | 'detached'): void;
  onError(error: Error): void;
}

interface Folder {
  watcher: FSWatcher;
  /** The folder's inode when it was attached: a folder re-created under the same name is another. */
  ino: number;
  /** Relevant entries by name: true for a folder (watched too), false for anything else. */
  entries: Map<string, boolean>;
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

function isFolder(entry: Dirent): boolean {
  // A symbolic link is an entry like a file: links are not followed.
  return entry.isDirectory();
}

/**
 * The folders of a project that matter, each with a watch of its own (one inotify watch per
 * folder, never one per file). A notification names an entry; that one entry is lstat'ed to
 * tell an addition, a change or a removal from the entries the folder is known to hold. A file
 * written into a folder of ten thousand costs one lstat, where a watcher that re-lists the
 * folder on each notification (chokidar does) costs ten thousand.
 */
export class FolderTree {
  private readonly folders = new Map<string, Folder>();
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly events: FolderTreeEvents,
    private readonly watchOne: WatchFolder = watchFolder,
  ) {}

  /** Watches `rel` (a folder) and the relevant folders below it; `quiet`: report nothing found (the first scan). */
  attach(rel: string, quiet: boolean): void {
    if (this.closed || this.folders.has(rel) || !this.events.relevant(rel)) return;
    const abs = this.abs(rel);
    let ino: number;
    let watcher: FSWatcher;
    try {
      ino = lstatSync(abs).ino;
      // Watch first, then list: an entry created in between is in the listing, the notification, or both.
      watcher = this.watchOne(abs, (_event, name) => this.notified(rel, name === null ? undefined : String(name)));
    } catch (error) {
      this.watchFailed(rel, error);
      return;
    }
    // A watch that fails (its folder went away, on some systems) watches nothing more.
    watcher.on('error', () => this.detach(rel));
    const folder: Folder = { watcher, ino, entries: new Map() };
    this.folders.set(rel, folder);
    if (!quiet) this.events.onFolder(rel, 'attached');
    this.list(rel, folder, quiet);
  }

  /** Lists a watched folder again (its relevance changed) and attaches folders now relevant, reporting nothing. */
  rescan(rel: string): void {
    const folder = this.folders.get(rel);
    if (folder) this.list(rel, folder, true);
  }

  /**
   * Whether a change to `rel` is notified: the folder holding it is watched, and so is `rel`
   * itself when it is a folder. False under a folder the system refused to watch (the limit of
   * inotify watches): what lies there is stat'ed, never vouched for by silence.
   */
  watches(rel: string): boolean {
    if (rel === '') return this.folders.has('');
    const parent = path.posix.dirname(rel);
    const folder = this.folders.get(parent === '.' ? '' : parent);
    if (!folder) return false;
    return folder.entries.get(path.posix.basename(rel)) === true ? this.folders.has(rel) : true;
  }

  /** The nearest watched folder at or above `rel`. */
  nearestWatched(rel: string): string {
    for (let dir = rel; ; dir = path.posix.dirname(dir)) {
      if (dir === '.' || dir === '/') return '';
      if (this.folders.has(dir)) return dir;
    }
  }

  close(): void {
    this.closed = true;
    for (const folder of this.folders.values()) folder.watcher.close();
    this.folders.clear();
  }

  private abs(rel: string): string {
    return rel === '' ? this.root : path.join(this.root, rel);
  }

  private list(rel: string, folder: Folder, quiet: boolean): void {
    let entries: Dirent[];
    try {
      entries = readdirSync(this.abs(rel), { withFileTypes: true });
    } catch {
      // Gone already: its parent's notification detaches it.
      return;
    }
    for (const entry of entries) {
      const child = join(rel, entry.name);
      if (folder.entries.has(entry.name) || !this.events.relevant(child)) continue;
      const dir = isFolder(entry);
      folder.entries.set(entry.name, dir);
      if (!quiet) this.events.onChange(dir ? 'addDir' : 'add', child);
      if (dir) this.attach(child, quiet);
    }
  }

  private notified(rel: string, name: string | undefined): void {
    if (this.closed) return;
    this.events.onRaw(rel, name);
    const folder = this.folders.get(rel);
    if (!folder) return;
    if (name === undefined) {
      // No entry named (a platform that cannot tell): look at every entry the folder held, then
      // list it for new ones.
      for (const known of [...folder.entries.keys()]) {
        const child = join(rel, known);
        if (this.events.relevant(child)) this.look(folder, known, child);
      }
      this.list(rel, folder, false);
      return;
    }
    const child = join(rel, name);
    if (!this.events.relevant(child)) return;
    this.look(folder, name, child);
  }

  /** Compares what is at `child` now with what the folder held there. */
  private look(folder: Folder, name: string, child: string): void {
    const known = folder.entries.get(name);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(this.abs(child), { throwIfNoEntry: false });
    } catch {
      st = undefined;
    }
    if (!st) {
      if (known === undefined) return;
      folder.entries.delete(name);
      this.removed(child, known);
      return;
    }
    const dir = st.isDirectory();
    if (known !== undefined && known !== dir) {
      // A file replaced by a folder, or the other way round.
      folder.entries.delete(name);
      this.removed(child, known);
    }
    if (dir) {
      const watched = this.folders.get(child);
      if (watched && watched.ino === st.ino) return;
      // New, or removed and made again (by the time we look) under the same name.
      if (watched) this.removed(child, true);
      folder.entries.set(name, true);
      this.events.onChange('addDir', child);
      this.attach(child, false);
      return;
    }
    folder.entries.set(name, false);
    this.events.onChange(known === false ? 'change' : 'add', child);
  }

  /** Reports a removed entry (a folder with everything it held) and stops watching what went. */
  private removed(rel: string, dir: boolean): void {
    if (!dir) {
      this.events.onChange('unlink', rel);
      return;
    }
    const folder = this.folders.get(rel);
    if (folder) for (const [name, sub] of folder.entries) this.removed(join(rel, name), sub);
    this.detach(rel);
    this.events.onChange('unlinkDir', rel);
  }

  private detach(rel: string): void {
    const folder = this.folders.get(rel);
    if (!folder) return;
    folder.watcher.close();
    this.folders.delete(rel);
    if (!this.closed) this.events.onFolder(rel, 'detached');
  }

  private watchFailed(rel: string, error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code;
    // Gone between the listing and the watch: its parent's notification reports it.
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    const hint =
      code === 'ENOSPC'
        ? ' (the limit of inotify watches is reached: raise fs.inotify.max_user_watches)'
        : code === 'EMFILE'
          ? ' (too many open files: raise the limit, ulimit -n)'
          : '';
    this.events.onError(new Error(`cannot watch ${rel === '' ? '.' : rel}: ${(error as Error).message}${hint}`));
  }
}
