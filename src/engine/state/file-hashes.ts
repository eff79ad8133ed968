import { readFileSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { hashFile, type HashFileOptions } from './hash-file.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';

/** [size, mtimeMs, ino, sha256 base64url] */
export type FileStamp = [number, number, number, string];

/**
 * A file that exists but could not be read. Never taken for a missing file: a fingerprint
 * that said "missing" would stay the same however the file changed.
 */
export class FileReadError extends Error {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`cannot read ${file} to fingerprint it: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'FileReadError';
  }
}

/** Errors that mean the path is not there (a file removed between stat and read included). */
function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The stamp of a file from its stat and its content's hash, taken together. */
export function contentStamp(file: { size: number; mtimeMs: number; ino: number; hash: string }): FileStamp {
  return [file.size, file.mtimeMs, file.ino, file.hash];
}

/**
 * Content hashes behind a stat cache: a file whose size, mtime and inode are unchanged since
 * it was last hashed is not read again. Persisted in `.refinery/cache/file-hashes.json`.
 */
export class FileHashes {
  private readonly entries: Map<string, FileStamp>;
  /** Stamps already checked against the disk since the last save(): one stat per file per run. */
  private readonly checked = new Map<string, FileStamp | null>();
  private dirty = false;
  private readonly file: string;

  constructor(
    private readonly root: string,
    private readonly warn?: StateWarn,
    private readonly hashing: HashFileOptions = {},
  ) {
    this.file = path.join(root, '.refinery', 'cache', 'file-hashes.json');
    this.entries = new Map(this.load());
  }

  /** The saved stamps; an unreadable file is set aside and every file is hashed again. */
  private load(): Array<[string, FileStamp]> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.setAside(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
      return [];
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      this.setAside('is not valid JSON');
      return [];
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      this.setAside('is not a map of file stamps');
      return [];
    }
    const entries = Object.entries(data as Record<string, unknown>);
    for (const [rel, stamp] of entries) {
      if (!isStamp(stamp)) {
        this.setAside(`has a malformed stamp for '${rel}'`);
        return [];
      }
    }
    return entries as Array<[string, FileStamp]>;
  }

  private setAside(problem: string): void {
    setAsideAndWarn(this.root, this.file, problem, this.warn, 'every file is hashed again');
  }

  private static matches(stamp: FileStamp | undefined, st: Stats): stamp is FileStamp {
    return stamp !== undefined && stamp[0] === st.size && stamp[1] === st.mtimeMs && stamp[2] === st.ino;
  }

  /**
   * The file's stamp (path relative to the root, or absolute), or undefined when it does not
   * exist or is not a regular file. Throws FileReadError when it exists but cannot be stat'ed or read.
   */
  stamp(rel: string): FileStamp | undefined {
    const known = this.checked.get(rel);
    if (known !== undefined) return known ?? undefined;
    const stamp = this.stampFromDisk(rel);
    this.checked.set(rel, stamp ?? null);
    return stamp;
  }

  private stampFromDisk(rel: string): FileStamp | undefined {
    // An absolute input (/etc/hosts) is read where it is.
    const abs = path.isAbsolute(rel) ? rel : path.join(this.root, rel);
    // Missing files are common (outputs not made yet): no exception for them.
    let st: Stats | undefined;
    try {
      st = statSync(abs, { throwIfNoEntry: false });
    } catch (error) {
      if (!isMissing(error)) throw new FileReadError(rel, error);
      st = undefined;
    }
    if (!st) {
      this.forget(rel);
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const cached = this.entries.get(rel);
    if (FileHashes.matches(cached, st)) return cached;
    let hash: string;
    try {
      hash = hashFile(abs, st.size, this.hashing);
    } catch (error) {
      if (!isMissing(error)) throw new FileReadError(rel, error);
      this.forget(rel);
      return undefined;
    }
    const stamp: FileStamp = [st.size, st.mtimeMs, st.ino, hash];
    // A file modified within the clock's resolution could change again unseen: don't trust its stat.
    if (Date.now() - st.mtimeMs > 2000) this.remember(rel, stamp);
    return stamp;
  }

  hash(rel: string): string | undefined {
    return this.stamp(rel)?.[3];
  }

  /**
   * Forgets what was seen of the disk. Called after a stage fails (it may have left anything);
   * a stage that succeeds updates the stamps of the outputs it declares, and a file it wrote
   * without declaring it is seen by the next run.
   */
  invalidateAll(): void {
    this.checked.clear();
  }

  remember(rel: string, stamp: FileStamp): void {
    this.checked.set(rel, stamp);
    this.entries.set(rel, stamp);
    this.dirty = true;
  }

  forget(rel: string): void {
    this.checked.delete(rel);
    if (this.entries.delete(rel)) this.dirty = true;
  }

  /**
   * Writes the cache if it changed; atomic (temp file + rename). A write that fails (a full
   * disk) is returned, not thrown: the stamps are only a cache, the next run hashes again.
   */
  save(): WriteProblem | undefined {
    this.checked.clear();
    if (!this.dirty) return undefined;
    try {
      ensureStateDir(this.root, path.dirname(this.file), this.warn);
      writeFileAtomicSync(this.file, JSON.stringify(Object.fromEntries(this.entries)));
    } catch (error) {
      return writeProblem(this.file, error);
    }
    this.dirty = false;
    return undefined;
  }
}

function isStamp(value: unknown): value is FileStamp {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    typeof value[0] === 'number' &&
    typeof value[1] === 'number' &&
    typeof value[2] === 'number' &&
    typeof value[3] === 'string'
  );
}
