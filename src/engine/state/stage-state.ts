import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FileStamp } from './file-hashes.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';
import { endsWhole, entryId, isDropLine, type JournalLine, lineEnd, lineNumberAt, parseLine, previousLine } from './journal-lines.ts';

/** What a fingerprint was made of, kept so `refinery why` can say what changed. */
export interface FingerprintParts {
  /** Hash of the task source or the command. */
  code: string;
  /** Hash of resolved params (`with:` or the rendered command). */
  params: string;
  /** Input path -> content hash. */
  inputs: Record<string, string>;
  /** Needed instance id -> its fingerprint. */
  deps: Record<string, string>;
  /** Schema name -> hash of the schema file. */
  schemas: Record<string, string>;
  /** Set when the result is not shared through a remote cache, and why (its params name the project folder by absolute path). */
  local?: string;
}

export interface StageRecord {
  stage: string;
  fingerprint: string;
  parts: FingerprintParts;
  outputs: Record<string, FileStamp>;
  runId: string;
  finishedAt: string;
  durationMs: number;
}

const EMPTY = Buffer.alloc(0);
const NEWLINE = Buffer.from('\n');

/**
 * Per-pipeline stage state as an append-only journal: a stage's old record is dropped (a
 * `null` line) before it runs and its new record appended after its outputs are in place, so
 * a crash leaves it stale, never falsely fresh. A torn line (cut short by a crash or a full
 * disk) is ignored: the stage's line before it stands. A line that is whole JSON but no
 * journal entry means the file was damaged: it is set aside and the pipeline's stages run again.
 *
 * Reading a journal of 10,000 stages whole costs more than a run that checks one changed file,
 * so such a run opens it with the ids of the stages it may ask about (`scope`): the lines are
 * only scanned for each stage's last one (a line not in the form refinery writes, `null` say,
 * is parsed by the scan), and the last lines of the stages in scope are parsed and checked at
 * once, before any record is used; another stage's line is parsed when it is asked for. The rule: **a damaged line found at any time sets the journal aside and the
 * stages run again.** Found while opening, no stage is judged on any of its records; found
 * later (a stage outside the scope, or in `all()` or `compact()`), the records read before
 * stand and every other stage runs again. Lines a stage has since replaced are not read. Without
 * a scope every line is parsed and checked at once: a run that checks everything reads every
 * record anyway.
 */
export class StageState {
  readonly file: string;
  /** The journal as read, while lines of stages not asked for yet may be parsed from it. */
  private bytes: Buffer = EMPTY;
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
    this.load(scope);
  }

  private load(scope: Iterable<string> | undefined): void {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.setAside(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
      return;
    }
    this.torn = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a;
    if (!scope) return this.parseEveryLine(bytes);
    this.bytes = bytes;
    if (!this.scan()) return;
    for (const stage of scope) if (this.read(stage) === 'damaged') return;
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
        if (entry !== 'torn') this.records.set(entry.s, entry.f === null ? null : entry.r);
      }
      start = end + 1;
    }
  }

  /** Indexes each stage's last line; a line not in the form refinery writes is parsed now. False when the journal was set aside. */
  private scan(): boolean {
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
          if (entry === 'damaged') {
            this.damaged(number);
            return false;
          }
          if (entry !== 'torn') this.lastLine.set(entry.s, start);
        }
      }
      start = end + 1;
    }
    return true;
  }

  /** Parses the stage's last whole line (a torn one gives way to the one before) into `records`. */
  private read(stage: string): StageRecord | null | 'damaged' {
    const bytes = this.bytes;
    let record: StageRecord | null = null;
    for (let start = this.lastLine.get(stage) ?? -1; start >= 0; start = previousLine(bytes, stage, start)) {
      const entry = parseLine(bytes, start, lineEnd(bytes, start));
      if (entry === 'torn') continue;
      if (entry === 'damaged' || entry.s !== stage) {
        this.damaged(lineNumberAt(bytes, start));
        return 'damaged';
      }
      record = entry.f === null ? null : entry.r;
      break;
    }
    this.records.set(stage, record);
    return record;
  }

  /** A damaged line: the journal is set aside and what was read of it forgotten (this run's own records stay). */
  private damaged(lineNumber: number): void {
    this.close();
    this.setAside(`line ${lineNumber} is not a journal entry`);
    this.bytes = EMPTY;
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
    const read = this.lastLine.has(stage) ? this.read(stage) : null;
    return read === 'damaged' || read === null ? undefined : read;
  }

  all(): StageRecord[] {
    for (const stage of [...this.lastLine.keys()]) if (!this.records.has(stage) && this.read(stage) === 'damaged') break;
    return [...this.records.values()].filter((r): r is StageRecord => r !== null);
  }

  /** How many stages the journal has lines for: at least as many as have a record, counted without parsing a line. */
  private stageCount(): number {
    let count = this.lastLine.size;
    for (const stage of this.records.keys()) if (!this.lastLine.has(stage)) count += 1;
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
    this.torn = true;
    // A write to a filling disk can be short before it fails: the rest is written or the error thrown.
    for (let done = 0; done < line.length; ) done += writeSync(this.fd, line, done);
    this.torn = false;
    this.lines += 1;
  }

  /** Closes the journal (it reopens on the next append). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
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
    this.append({ s: record.stage, f: record.fingerprint, r: record });
  }

  /**
   * Rewrites the journal with one line per stage once it has grown a quarter past that (each
   * run that checks what changed reads it whole). The last line of a stage not read is copied as
   * written, not parsed: a damaged one is found when it is read, as it would have been (one cut
   * short is read now, so its stage keeps the line before). A rewrite that fails (a full disk)
   * leaves the journal as it was and is returned.
   */
  compact(): WriteProblem | undefined {
    const stages = this.stageCount();
    if (this.lines <= stages + Math.max(64, stages >> 2)) return undefined;
    this.close();
    let body: Buffer[] = [];
    const bytes = this.bytes;
    for (const [stage, start] of [...this.lastLine]) {
      if (this.records.has(stage)) continue;
      const line = bytes.subarray(start, lineEnd(bytes, start));
      if (!endsWhole(line)) {
        // Set aside as damaged: none of its lines is copied, this run's records make the new journal.
        if (this.read(stage) === 'damaged') body = [];
        if (this.bytes === EMPTY) break;
      } else if (!isDropLine(line)) body.push(line);
    }
    for (const [stage, record] of this.records)
      if (record) body.push(Buffer.from(JSON.stringify({ s: stage, f: record.fingerprint, r: record })));
    try {
      writeFileAtomicSync(this.file, Buffer.concat(body.flatMap((line) => [line, NEWLINE])), { sync: true });
    } catch (error) {
      return writeProblem(this.file, error);
    }
    this.lines = body.length;
    this.torn = false;
    return undefined;
  }
}
