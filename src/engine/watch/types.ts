import type { Diagnostic } from '../types/source.ts';

/** What the watcher saw happen to a path. */
export type ChangeKind = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

/** One file-system change, path relative to the project root with '/' separators. */
export interface FileChange {
  kind: ChangeKind;
  path: string;
}

/** What the watch daemon reports besides run events; the CLI renders these. */
export type WatchNotice =
  | { kind: 'watching'; pipelines: string[]; paths: number }
  /** A debounced batch of changes, before it is routed to the pipelines. */
  | { kind: 'changes'; paths: string[] }
  | { kind: 'reloaded'; pipeline: string; file: string }
  | { kind: 'reload-failed'; pipeline: string; file: string; diagnostics: Diagnostic[]; source: string }
  | { kind: 'stages-added'; pipeline: string; stages: string[] }
  | { kind: 'stages-retired'; pipeline: string; stages: string[] }
  | { kind: 'restarting'; pipeline: string; stages: string[] }
  /** Stages whose last result asked to be redone, run again with no change (`stale_if`). */
  | { kind: 'recheck'; pipeline: string; stages: string[] }
  | { kind: 'outside-root'; pipeline: string; path: string }
  | { kind: 'task-changed'; pipeline: string; file: string }
  | { kind: 'watch-error'; message: string }
  | { kind: 'stopping'; running: string[] };

export type BusyPolicy = 'queue' | 'restart';
