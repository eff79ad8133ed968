import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FileStamp } from './file-hashes.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';

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

type JournalLine = { s: string; f: null } | { s: string; f: string; r: StageRecord };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The shape the engine relies on; anything else is a journal someone or something damaged. */
function isRecord(r: unknown, stage: string, fingerprint: string): r is StageRecord {
  if (!isObject(r) || r.stage !== stage || r.fingerprint !== fingerprint) return false;
  if (typeof r.runId !== 'string' || typeof r.finishedAt !== 'string' || typeof r.durationMs !== 'number') return false;
  const parts = r.parts;
  if (!isObject(parts) || typeof parts.code !== 'string' || typeof parts.params !== 'string') return false;
  if (!isObject(parts.inputs) || !isObject(parts.deps) || !isObject(parts.schemas) || !isObject(r.outputs)) return false;
  for (const stamp of Object.values(r.outputs)) if (!Array.isArray(stamp) || typeof stamp[3] !== 'string') return false;
  return true;
}

function isJournalLine(entry: unknown): entry is JournalLine {
  if (!isObject(entry) || typeof entry.s !== 'string') return false;
  return entry.f === null || (typeof entry.f === 'string' && isRecord(entry.r, entry.s, entry.f));
}

/**
 * Per-pipeline stage state as an append-only journal: a stage's old record is dropped (a
 * `null` line) before it runs and its new record appended after its outputs are in place, so
 * a crash leaves it stale, never falsely fresh. A torn line (cut short by a crash or a full
 * disk) is ignored. A line that is whole JSON but no journal entry means the file was damaged:
 * it is set aside and the pipeline's stages run again.
 */
export class StageState {
  private readonly records = new Map<string, StageRecord>();
  readonly file: string;
  private lines = 0;
  /** The file does not end with a newline (a torn write): the next line must not be glued to it. */
  private torn = false;

  constructor(
    private readonly root: string,
    pipeline: string,
    private readonly warn?: StateWarn,
  ) {
    this.file = path.join(root, '.refinery', 'state', `${pipeline}.jsonl`);
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.setAside(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
      return;
    }
    this.torn = text.length > 0 && !text.endsWith('\n');
    let number = 0;
    for (const line of text.split('\n')) {
      number += 1;
      if (!line) continue;
      this.lines += 1;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isJournalLine(entry)) {
        this.records.clear();
        this.lines = 0;
        this.torn = false;
        this.setAside(`line ${number} is not a journal entry`);
        return;
      }
      if (entry.f === null) this.records.delete(entry.s);
      else this.records.set(entry.s, entry.r);
    }
  }

  private setAside(problem: string): void {
    setAsideAndWarn(this.root, this.file, problem, this.warn, "this pipeline's stages run again");
  }

  get(stage: string): StageRecord | undefined {
    return this.records.get(stage);
  }

  all(): StageRecord[] {
    return [...this.records.values()];
  }

  private fd: number | undefined;

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
    if (!this.records.has(stage)) return;
    this.records.delete(stage);
    this.append({ s: stage, f: null });
  }

  /** Records a stage as done; written at once, so a stage reported finished is never rerun after a crash. */
  commit(record: StageRecord): void {
    this.records.set(record.stage, record);
    this.append({ s: record.stage, f: record.fingerprint, r: record });
  }

  /**
   * Rewrites the journal with one line per stage when it has grown well past that. A rewrite
   * that fails (a full disk) leaves the journal as it was and is returned.
   */
  compact(): WriteProblem | undefined {
    if (this.lines <= Math.max(64, this.records.size * 2)) return undefined;
    this.close();
    const body = [...this.records.values()].map((r) => JSON.stringify({ s: r.stage, f: r.fingerprint, r })).join('\n');
    try {
      writeFileAtomicSync(this.file, body ? `${body}\n` : '', { sync: true });
    } catch (error) {
      return writeProblem(this.file, error);
    }
    this.lines = this.records.size;
    this.torn = false;
    return undefined;
  }
}
