import { closeSync, fstatSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { StageRecord } from './stage-record.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';
import {
  INDEX_MIN_BYTES,
  INDEX_REFRESH_BYTES,
  JournalIndex,
  type JournalIdentity,
  journalIdentity,
  removeJournalIndex,
  sameJournal,
  writeJournalIndex,
} from './journal-index.ts';
export type { FingerprintParts, StageRecord } from './stage-record.ts';
import {
  endsWhole,
  entryDigest,
  entryId,
  isDropLine,
  type JournalLine,
  journalLine,
  lineEnd,
  lineNumberAt,
  parseLine,
  previousLine,
} from './journal-lines.ts';
import { outputsDigest } from './outputs-digest.ts';

const EMPTY = Buffer.alloc(0);
const NEWLINE = Buffer.from('\n');

/**
 * Per-pipeline stage state as an append-only journal: a stage's old record is dropped (a
 * `null` line) before it runs and its new record appended after its outputs are in place, so
 * a crash leaves it stale, never falsely fresh.
 *
 * The invariant: **a stage's record says which content it read (its input files, the outputs of
 * the stages it `needs:`, its schemas), its params and its code, and that its outputs on disk
 * are what it wrote from them.** A stage is up to date while all of these are the same; whether
 * an upstream ran again does not matter, only what it wrote (early cutoff: an upstream that
 * writes the same bytes starts nothing after it). Write order keeps it through a crash: staging,
 * validate, atomic rename, record last; a stage it `needs:` is judged by its own record, which
 * is dropped before that stage replaces a byte. A record whose reads are the same under another
 * fingerprint (written by an earlier refinery) is written again with the new one, not rerun.
 *
 * A torn line (cut short by a crash or a full
 * disk) is ignored: the stage's line before it stands. A line that is whole JSON but no
 * journal entry means the file was damaged: it is set aside and the pipeline's stages run again.
 *
 * Reading a journal of 10,000 stages whole costs more than a run that checks one changed file,
 * so such a run opens it with the ids of the stages it may ask about (`scope`): the lines are
 * only scanned for each stage's last one (a line not in the form refinery writes, `null` say,
 * is parsed by the scan), and the last lines of the stages in scope are parsed and checked at
 * once, before any record is used; another stage's line is parsed when it is asked for. A large
 * journal has an index of where each stage's last line starts (journal-index.ts): a scoped open
 * then reads only the lines past what the index covers, and the lines it points at. Wherever the
 * index and the journal disagree, the whole journal is read and scanned instead, as without one.
 *
 * The rule: **a damaged line found at any time sets the journal aside and the stages run
 * again.** Found while opening, no stage is judged on any of its records; found later (a stage
 * outside the scope, or in `all()` or `compact()`), the records read before stand and every
 * other stage runs again. Lines a stage has since replaced are not read. Without a scope every
 * line is parsed and checked at once: a run that checks everything reads every record anyway.
 */
export class StageState {
  readonly file: string;
  /** The journal as read (past `base`), while lines of stages not asked for yet may be parsed from it. */
  private bytes: Buffer = EMPTY;
  /** Where `bytes` starts in the file: after the part the index covers, when read through it. */
  private base = 0;
  /** While read through its index (`base` > 0): the lines the index points at are read from it. */
  private index: JournalIndex | undefined;
  /** The journal as read (undefined when there was none): an index is written only for that file. */
  private identity: JournalIdentity | undefined;
  /** Where the next line starts: the end of what was read and of what this run appended since; -1 when a write failed. */
  private end = 0;
  /** Stage -> where the last line this run appended for it starts. */
  private readonly appended = new Map<string, number>();
  /** Read whole, not through an index that held: the run leaves an index at its end (once). */
  private indexPending = true;
  /** Stage -> where its last line starts in `bytes`. */
  private readonly lastLine = new Map<string, number>();
  /** Records read (and checked) or written by this run; null for a stage without one. */
  private readonly records = new Map<string, StageRecord | null>();
  /** Stages whose record this run wrote or dropped. */
  private readonly written = new Set<string>();
  private lines = 0;
  /** The file does not end with a newline (a torn write): the next line must not be glued to it. */
  private torn = false;
  private fd: number | undefined;

  constructor(
    private readonly root: string,
    pipeline: string,
    private readonly warn?: StateWarn,
    scope?: Iterable<string>,
  ) {
    this.file = path.join(root, '.refinery', 'state', `${pipeline}.jsonl`);
    if (!scope || !this.openIndexed(scope)) this.load(scope);
  }

  /** The journal and what it is; undefined when there is none or it was set aside. */
  private readJournal(): { bytes: Buffer; identity: JournalIdentity } | undefined {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A journal made anew must not be read through the index of one removed by hand.
      if (code === 'ENOENT') removeJournalIndex(this.file);
      else this.setAside(`cannot be read (${code})`);
      return undefined;
    }
    try {
      return { identity: journalIdentity(fstatSync(fd)), bytes: readFileSync(fd) };
    } catch (error) {
      this.setAside(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  private load(scope: Iterable<string> | undefined): void {
    const journal = this.readJournal();
    if (!journal) return;
    const { bytes } = journal;
    this.identity = journal.identity;
    this.end = bytes.length;
    this.torn = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a;
    if (!scope) return this.parseEveryLine(bytes);
    this.bytes = bytes;
    const damagedAt = this.scan();
    if (damagedAt !== undefined) return this.damaged(damagedAt);
    for (const stage of scope) if (this.read(stage) === 'damaged') return;
  }

  /** A scoped open through the journal's index, when one holds for it; false to read the journal whole. */
  private openIndexed(scope: Iterable<string>): boolean {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return false;
    }
    let index: JournalIndex | undefined;
    let tail: Buffer;
    try {
      index = JournalIndex.open(this.file, fd);
      if (!index) {
        closeSync(fd);
        return false;
      }
      tail = index.tail();
    } catch {
      if (index) index.close();
      else closeSync(fd);
      return false;
    }
    this.index = index;
    this.indexPending = false;
    this.base = index.covered;
    this.end = index.covered + tail.length;
    this.bytes = tail;
    this.torn = tail.length > 0 && tail[tail.length - 1] !== 0x0a;
    // A damaged line past the index is reported where it is in the whole journal.
    if (this.scan() !== undefined) {
      if (!this.readAll()) return true;
    } else this.lines += index.lines;
    for (const stage of scope) if (this.read(stage) === 'damaged') return true;
    return true;
  }

  /** Every line parsed and checked, in order: the last entry of each stage stands. */
  private parseEveryLine(bytes: Buffer): void {
    let number = 0;
    for (let start = 0; start < bytes.length; ) {
      const end = lineEnd(bytes, start);
      number += 1;
      if (end > start) {
        this.lines += 1;
        const entry = parseLine(bytes, start, end);
        if (entry === 'damaged') return this.damaged(number);
        if (entry !== 'torn') {
          this.records.set(entry.s, entry.f === null ? null : entry.r);
          this.lastLine.set(entry.s, start);
        }
      }
      start = end + 1;
    }
  }

  /** Indexes each stage's last line in `bytes`; a line not in the form refinery writes is parsed now. The number of the first damaged line, if any. */
  private scan(): number | undefined {
    const bytes = this.bytes;
    let number = 0;
    for (let start = 0; start < bytes.length; ) {
      const end = lineEnd(bytes, start);
      number += 1;
      if (end > start) {
        this.lines += 1;
        const id = entryId(bytes, start, end);
        if (id !== undefined) this.lastLine.set(id, start);
        else {
          const entry = parseLine(bytes, start, end);
          if (entry === 'damaged') return number;
          if (entry !== 'torn') this.lastLine.set(entry.s, start);
        }
      }
      start = end + 1;
    }
    return undefined;
  }

  /**
   * Leaves the index: the whole journal read and scanned, the lines this run appended included
   * (the records it read stand). False when the journal was set aside.
   */
  private readAll(): boolean {
    this.closeIndex();
    this.base = 0;
    this.bytes = EMPTY;
    this.lastLine.clear();
    this.lines = 0;
    const journal = this.readJournal();
    if (!journal) {
      this.forget();
      return false;
    }
    this.bytes = journal.bytes;
    this.identity = journal.identity;
    this.end = journal.bytes.length;
    this.appended.clear();
    this.indexPending = true;
    const damagedAt = this.scan();
    if (damagedAt !== undefined) {
      this.damaged(damagedAt);
      return false;
    }
    return true;
  }

  /** Parses the stage's last whole line (a torn one gives way to the one before) into `records`. */
  private read(stage: string): StageRecord | null | 'damaged' {
    const bytes = this.bytes;
    for (let start = this.lastLine.get(stage) ?? -1; start >= 0; start = previousLine(bytes, stage, start)) {
      const entry = parseLine(bytes, start, lineEnd(bytes, start));
      if (entry === 'torn') continue;
      if (entry === 'damaged' || entry.s !== stage) {
        if (this.base > 0) return this.readAll() ? this.read(stage) : 'damaged';
        this.damaged(lineNumberAt(bytes, start));
        return 'damaged';
      }
      return this.remember(stage, entry.f === null ? null : entry.r);
    }
    if (this.base === 0) return this.remember(stage, null);
    // No whole line past what the index covers: the line it points at, if it has one.
    const line = this.index ? this.index.lineOf(stage) : 'unsure';
    if (line === undefined) return this.remember(stage, null);
    const entry = line === 'unsure' ? line : parseLine(line, 0, line.length);
    if (typeof entry === 'string' || entry.s !== stage) return this.readAll() ? this.read(stage) : 'damaged';
    return this.remember(stage, entry.f === null ? null : entry.r);
  }

  private remember(stage: string, record: StageRecord | null): StageRecord | null {
    this.records.set(stage, record);
    return record;
  }

  /** A damaged line: the journal is set aside and what was read of it forgotten (this run's own records stay). */
  private damaged(lineNumber: number): void {
    this.close();
    removeJournalIndex(this.file);
    this.setAside(`line ${lineNumber} is not a journal entry`);
    this.forget();
  }

  /** What was read of the journal forgotten: this run's own records stay. */
  private forget(): void {
    this.bytes = EMPTY;
    this.base = 0;
    this.identity = undefined;
    this.end = 0;
    this.appended.clear();
    this.indexPending = true;
    this.lastLine.clear();
    for (const stage of [...this.records.keys()]) if (!this.written.has(stage)) this.records.delete(stage);
    this.lines = 0;
    this.torn = false;
  }

  private setAside(problem: string): void {
    setAsideAndWarn(this.root, this.file, problem, this.warn, "this pipeline's stages run again");
  }

  get(stage: string): StageRecord | undefined {
    const known = this.records.get(stage);
    if (known !== undefined || this.records.has(stage)) return known ?? undefined;
    const read = this.lastLine.has(stage) || this.base > 0 ? this.read(stage) : null;
    return read === 'damaged' || read === null ? undefined : read;
  }

  /**
   * What the stage wrote (its record's outputsDigest), as a stage that `needs:` it asks: read
   * from the head of its line when its record was not parsed, so a stage that needs thousands
   * parses none of their records. A line without a head (dropped, torn, of an earlier
   * refinery) is read as `get` reads it. Read through an index, the journal is read whole
   * first: one read of the file costs less than a read of each line.
   */
  wrote(stage: string): string {
    if (this.records.has(stage)) return outputsDigest(this.records.get(stage) ?? undefined);
    if (this.base > 0 && !this.lastLine.has(stage) && this.readAll() === false) return outputsDigest(undefined);
    const start = this.lastLine.get(stage);
    const head = start === undefined ? undefined : entryDigest(this.bytes, start, lineEnd(this.bytes, start));
    return head ?? outputsDigest(this.get(stage));
  }

  all(): StageRecord[] {
    if (this.base === 0 || this.readAll())
      for (const stage of [...this.lastLine.keys()]) if (!this.records.has(stage) && this.read(stage) === 'damaged') break;
    return [...this.records.values()].filter((r): r is StageRecord => r !== null);
  }

  /** How many stages the journal has lines for: at least as many as have a record, counted without parsing a line. */
  private stageCount(): number {
    const index = this.index;
    let count = this.lastLine.size + (index?.stages ?? 0);
    for (const stage of this.lastLine.keys()) if (index?.has(stage) === true) count -= 1;
    for (const stage of this.records.keys()) if (!this.lastLine.has(stage) && index?.has(stage) !== true) count += 1;
    return count;
  }

  /**
   * One open file for the whole run: a stage appends up to two lines, thousands of stages many.
   * Throws what the file system throws (a full disk): the caller decides what that means for
   * the stage. A line cut short is left torn, and the next one starts on a line of its own.
   */
  private append(entry: JournalLine): void {
    if (this.fd === undefined) {
      ensureStateDir(this.root, path.dirname(this.file), this.warn);
      this.fd = openSync(this.file, 'a');
    }
    const line = Buffer.from(`${this.torn ? '\n' : ''}${JSON.stringify(entry)}\n`);
    const at = this.end < 0 ? -1 : this.end + (this.torn ? 1 : 0);
    this.torn = true;
    this.end = -1;
    // A write to a filling disk can be short before it fails: the rest is written or the error thrown.
    for (let done = 0; done < line.length; ) done += writeSync(this.fd, line, done);
    this.torn = false;
    this.lines += 1;
    if (at >= 0) {
      this.end = at + line.length - (line[0] === 0x0a ? 1 : 0);
      this.appended.set(entry.s, at);
    }
  }

  private closeIndex(): void {
    this.index?.close();
    this.index = undefined;
  }

  /** Closes the journal (it reopens on the next append) and its index (a record not read yet is then read from the whole journal). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.closeIndex();
  }

  /** Written at once, before the stage can replace its outputs: a crash after it leaves the stage stale. */
  drop(stage: string): void {
    if (this.get(stage) === undefined) return;
    this.records.set(stage, null);
    this.written.add(stage);
    this.append({ s: stage, f: null });
  }

  /** Records a stage as done; written at once, so a stage reported finished is never rerun after a crash. */
  commit(record: StageRecord): void {
    this.records.set(record.stage, record);
    this.written.add(record.stage);
    this.append(journalLine(record));
  }

  /**
   * Rewrites the journal with one line per stage once it has grown a quarter past that (each
   * run that checks what changed reads it whole), and its index after it. The last line of a
   * stage not read is copied as written, not parsed: a damaged one is found when it is read, as
   * it would have been (one cut short is read now, so its stage keeps the line before). A
   * rewrite that fails (a full disk) leaves the journal as it was and is returned. Short of a
   * rewrite, a large journal read whole for want of an index gets one.
   */
  compact(): WriteProblem | undefined {
    // An index closed early no longer says what it covers.
    if (this.base > 0 && !this.index) this.readAll();
    const stages = this.stageCount();
    if (this.lines <= stages + Math.max(64, stages >> 2)) {
      if (this.base > 0 && this.end - this.base > INDEX_REFRESH_BYTES) this.readAll();
      this.writePendingIndex();
      return undefined;
    }
    if (this.base > 0) this.readAll();
    this.close();
    removeJournalIndex(this.file);
    let body: Array<[stage: string, line: Buffer]> = [];
    const bytes = this.bytes;
    for (const [stage, start] of [...this.lastLine]) {
      if (this.records.has(stage)) continue;
      const line = bytes.subarray(start, lineEnd(bytes, start));
      if (!endsWhole(line)) {
        // Set aside as damaged: none of its lines is copied, this run's records make the new journal.
        if (this.read(stage) === 'damaged') body = [];
        if (this.bytes === EMPTY) break;
      } else if (!isDropLine(line)) body.push([stage, line]);
    }
    for (const [stage, record] of this.records) if (record) body.push([stage, Buffer.from(JSON.stringify(journalLine(record)))]);
    const text = Buffer.concat(body.flatMap(([, line]) => [line, NEWLINE]));
    try {
      writeFileAtomicSync(this.file, text, { sync: true });
    } catch (error) {
      return writeProblem(this.file, error);
    }
    this.lines = body.length;
    this.torn = false;
    // What is in memory still reads the old text; this object writes no index again.
    this.end = text.length;
    this.appended.clear();
    this.indexPending = false;
    if (text.length >= INDEX_MIN_BYTES) this.indexRewritten(body, text.length);
    return undefined;
  }

  /** The index of the journal just rewritten from `body`, one line per stage. */
  private indexRewritten(body: ReadonlyArray<readonly [string, Buffer]>, size: number): void {
    let identity: JournalIdentity;
    try {
      identity = journalIdentity(statSync(this.file));
    } catch {
      return;
    }
    const offsets = new Map<string, number>();
    let at = 0;
    for (const [stage, line] of body) {
      offsets.set(stage, at);
      at += line.length + 1;
    }
    writeJournalIndex(this.file, identity, size, body.length, offsets);
  }

  /**
   * The index of a large journal this object read whole (it had none that held, or none at all),
   * with the lines it appended: written once, at the end of the first run, for the runs after.
   */
  private writePendingIndex(): void {
    if (!this.indexPending || this.base > 0 || this.torn || this.end < INDEX_MIN_BYTES) return;
    this.indexPending = false;
    let now: JournalIdentity;
    try {
      now = journalIdentity(this.fd !== undefined ? fstatSync(this.fd) : statSync(this.file));
    } catch {
      return;
    }
    // Replaced since it was read (not by this run): what was read of it says nothing of the new file.
    if (this.identity && !sameJournal(this.identity, now)) return;
    const offsets = new Map(this.lastLine);
    for (const [stage, at] of this.appended) offsets.set(stage, at);
    writeJournalIndex(this.file, now, this.end, this.lines, offsets);
  }
}
