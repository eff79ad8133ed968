import { closeSync, constants, openSync, readFileSync, statSync, type Stats, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hashFile, type HashFileOptions } from './hash-file.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { compareWritten, KeyedLines } from './keyed-lines.ts';
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

/** The first line of the form this file is written in, with the size its stamp lines had when it was last written whole. */
const FORM = 'file stamps, one a line';

/**
 * The file grows by appends; a quarter past its size when written whole (and 64 KiB), it is
 * written whole again. A run indexes the appended lines at its first lookup (~2.5 ms a MiB), so
 * they are kept short: 20,000 stamps are rewritten (~20 ms) every ~50 runs that each change a few.
 */
const GROWTH_ALLOWED = 65_536;

/**
 * Content hashes behind a stat cache: a file whose size, mtime and inode are unchanged since
 * it was last hashed is not read again. Persisted in `.refinery/cache/file-hashes.json`.
 *
 * The file holds one stamp a line, so a run that needs a few stamps does not parse tens of
 * thousands and a run that changed a few does not write tens of thousands: a header line
 * (`{"form":FORM,"bytes":N}`), then lines `,"<path>":<stamp>` (a forgotten path: `null`),
 * found without parsing the others (keyed-lines.ts) and checked when read. A save appends the
 * changed lines (the last line of a path stands; a line cut short by a crash is ignored), and
 * writes the file whole, atomically, once appends have grown it a quarter, its lines sorted by path
 * (the header says `"sorted":true`), so a lookup halves them instead of reading them all. A
 * file in another form (an older refinery's one JSON object) is parsed and checked whole, and
 * written in this form.
 * A stamp that is whole JSON but no stamp, found at any time, sets the file aside, and every
 * file is hashed again.
 */
export class FileHashes {
  /** The file as read, in the one-a-line form; undefined when there is none (or it was parsed whole). */
  private read: KeyedLines | undefined;
  /**
   * Lines this object appended to the file since `read`, joined to it only when a stamp is next
   * looked up: joining copies the whole text, and after a run's last save none is.
   */
  private appendedSinceRead = '';
  /** The file's header as last written whole: what its stamp lines weighed, and whether they are sorted. */
  private header: FormHeader = { bytes: 0, sorted: false };
  /** Stamps read from the file or changed by this run (null: forgotten). */
  private readonly entries = new Map<string, FileStamp | null>();
  /** Paths whose stamp this run changed or forgot, to be saved. */
  private readonly changed = new Set<string>();
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
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      // Read, then decoded: Node 20 reads a large file as UTF-8 text twice as slowly.
      text = readFileSync(this.file).toString('utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.setAside(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
      return;
    }
    const header = formHeader(text);
    if (header) {
      this.lines = keyedLines(text, header);
      this.header = header;
      return;
    }
    // Another form: parsed whole, and saved in this one next time.
    for (const [rel, stamp] of this.parseWhole(text)) {
      this.entries.set(rel, stamp);
      this.changed.add(rel);
      this.dirty = true;
    }
  }

  /** The saved stamps of a file in another form; an unreadable one is set aside and every file is hashed again. */
  private parseWhole(text: string): Array<[string, FileStamp]> {
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

  /** The file's lines as they are now: what was read, and what this object appended since. */
  private get lines(): KeyedLines | undefined {
    if (this.read && this.appendedSinceRead !== '') {
      this.read = keyedLines(`${this.read.text}${this.appendedSinceRead}`, this.header);
      this.appendedSinceRead = '';
    }
    return this.read;
  }

  private set lines(lines: KeyedLines | undefined) {
    this.read = lines;
    this.appendedSinceRead = '';
  }

  /** The saved stamp, read from its line and checked; a malformed one sets the file aside. */
  private saved(rel: string): FileStamp | undefined {
    const known = this.entries.get(rel);
    if (known !== undefined || this.entries.has(rel)) return known ?? undefined;
    const value = this.lines?.value(rel);
    if (value === undefined) return undefined;
    let stamp: unknown;
    try {
      stamp = JSON.parse(value);
    } catch {
      // Cut short by a crash while appending: as if never written.
      return undefined;
    }
    if (stamp === null) return undefined;
    if (!isStamp(stamp)) {
      this.setAside(`has a malformed stamp for '${rel}'`);
      // What was read of it is forgotten; what this run stamped stays.
      this.lines = undefined;
      for (const key of [...this.entries.keys()]) if (!this.changed.has(key)) this.entries.delete(key);
      return undefined;
    }
    this.entries.set(rel, stamp);
    return stamp;
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
    const cached = this.saved(rel);
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
    this.changed.add(rel);
    this.dirty = true;
  }

  forget(rel: string): void {
    this.checked.delete(rel);
    if (this.saved(rel) === undefined) return;
    this.entries.set(rel, null);
    this.changed.add(rel);
    this.dirty = true;
  }

  /** This run's changed lines. */
  private changedLines(): string {
    let out = '';
    for (const rel of this.changed) out += `,${JSON.stringify(rel)}:${JSON.stringify(this.entries.get(rel) ?? null)}\n`;
    return out;
  }

  /** Appends the changed lines; false when there is no file in this form to append to (or it is due to be written whole). */
  private append(): boolean {
    const lines = this.lines;
    if (!lines || lines.text.length + this.changed.size * 128 > this.header.bytes + (this.header.bytes >> 2) + GROWTH_ALLOWED) return false;
    let fd: number;
    try {
      fd = openSync(this.file, constants.O_WRONLY | constants.O_APPEND);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    try {
      // A line cut short by a crash: the next starts on a line of its own.
      const text = `${lines.text.endsWith('\n') ? '' : '\n'}${this.changedLines()}`;
      writeFileSync(fd, text);
      this.appendedSinceRead = text;
    } finally {
      closeSync(fd);
    }
    return true;
  }

  /**
   * The whole file, its lines sorted by path as written: the last line of each path read,
   * unless this run changed it, and this run's stamps.
   */
  private whole(): string {
    let kept: Array<[key: string, line: string]> = [];
    const lines = this.lines;
    if (lines)
      for (const [rel, start] of lines.lines()) {
        if (this.changed.has(rel) || this.saved(rel) === undefined) continue;
        kept.push([lines.writtenKey(start) as string, lines.text.slice(start, lines.lineEnd(start))]);
      }
    // A malformed stamp among them set the file aside: none of its stamps is kept.
    if (this.lines !== lines) kept = [];
    for (const rel of this.changed) {
      const stamp = this.entries.get(rel);
      const key = JSON.stringify(rel);
      if (stamp) kept.push([key, `,${key}:${JSON.stringify(stamp)}`]);
    }
    kept.sort(([a], [b]) => compareWritten(a, b));
    let body = '';
    for (const [, line] of kept) body += `${line}\n`;
    this.header = { bytes: body.length, sorted: true };
    return `${JSON.stringify({ form: FORM, ...this.header })}\n${body}`;
  }

  /**
   * Writes what changed; a save that fails (a full disk) is returned, not thrown: the stamps are
   * only a cache, the next run hashes again.
   */
  save(): WriteProblem | undefined {
    this.checked.clear();
    if (!this.dirty) return undefined;
    try {
      ensureStateDir(this.root, path.dirname(this.file), this.warn);
      if (!this.append()) {
        const text = this.whole();
        writeFileAtomicSync(this.file, text);
        this.lines = keyedLines(text, this.header);
      }
    } catch (error) {
      return writeProblem(this.file, error);
    }
    this.changed.clear();
    this.dirty = false;
    return undefined;
  }
}

interface FormHeader {
  /** What the lines written whole weighed (UTF-16 code units, as text.length counts). */
  bytes: number;
  /** The lines written whole are sorted by path as written. */
  sorted: boolean;
}

/** The header of the one-a-line form, or undefined for another form. */
function formHeader(text: string): FormHeader | undefined {
  if (!text.startsWith('{"form":')) return undefined;
  const newline = text.indexOf('\n');
  try {
    const header = JSON.parse(text.slice(0, newline < 0 ? text.length : newline)) as { form?: unknown; bytes?: unknown; sorted?: unknown };
    return header.form === FORM && typeof header.bytes === 'number' ? { bytes: header.bytes, sorted: header.sorted === true } : undefined;
  } catch {
    return undefined;
  }
}

/** The file's lines, with where the sorted ones are when it says they are. */
function keyedLines(text: string, header: FormHeader): KeyedLines {
  if (!header.sorted) return new KeyedLines(text);
  const start = text.indexOf('\n') + 1;
  return new KeyedLines(text, { sorted: { start, end: start + header.bytes } });
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
