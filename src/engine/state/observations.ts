import { statSync } from 'node:fs';

/** [size, mtimeMs, inode], or null for a file that did not exist. */
export type FileStat = [number, number, number] | null;

/** A file's [size, mtimeMs, inode] now, or undefined when it is not there. */
export function statStamp(file: string): [number, number, number] | undefined {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st ? [st.size, st.mtimeMs, st.ino] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a run looked at on disk, with the stat each thing had **when it was read**, so a later
 * run can tell cheaply whether anything changed. Stats taken afterwards could hide a change
 * made between the read and the end of the run.
 */
export class Observations {
  /** Files whose content or stat fed a decision (inputs, outputs, task sources, schemas). */
  readonly files = new Map<string, FileStat>();
  /** Folders whose listing fed a decision (glob and directory walks), with their mtime then. */
  readonly dirs = new Map<string, number | null>();
  /** Answers of `exists(path)` in expressions. */
  readonly probes = new Map<string, boolean>();
  /** Files and folders the run changed itself (outputs it published, their folders): see `written`. */
  readonly written = new Set<string>();
  /** Before any stat was taken: a lower bound for the time of each (see settled-stat.ts). */
  readonly startedAt: number;

  constructor(startedAt = Date.now()) {
    this.startedAt = startedAt;
  }

  /** The first stat seen of a file stands, unless the run itself rewrote it (`replace`: it published it). */
  file(rel: string, stamp: readonly [number, number, number, ...unknown[]] | undefined, replace = false): void {
    if (replace) this.written.add(rel);
    if (replace || !this.files.has(rel)) this.files.set(rel, stamp ? [stamp[0], stamp[1], stamp[2]] : null);
  }

  dir(rel: string, mtimeMs: number | null): void {
    if (!this.dirs.has(rel)) this.dirs.set(rel, mtimeMs);
  }

  /** A folder changed by the run's own publishing: its new mtime is not a change from outside. */
  dirRewritten(rel: string, mtimeMs: number | null): void {
    if (!this.dirs.has(rel)) return;
    this.dirs.set(rel, mtimeMs);
    this.written.add(rel);
  }

  probe(rel: string, exists: (rel: string) => boolean): boolean {
    const answer = exists(rel);
    if (!this.probes.has(rel)) this.probes.set(rel, answer);
    return answer;
  }
}
