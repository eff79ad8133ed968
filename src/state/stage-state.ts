import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FileStamp } from './file-hashes.ts';

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

/**
 * Per-pipeline stage state as an append-only journal: a stage's old record is dropped (a
 * `null` line) before it runs and its new record appended after its outputs are in place, so
 * a crash leaves it stale, never falsely fresh. A torn last line is ignored.
 */
export class StageState {
  private readonly records = new Map<string, StageRecord>();
  private readonly file: string;
  private lines = 0;

  constructor(root: string, pipeline: string) {
    this.file = path.join(root, '.refinery', 'state', `${pipeline}.jsonl`);
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      this.lines += 1;
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        continue;
      }
      if (entry.f === null) this.records.delete(entry.s);
      else this.records.set(entry.s, entry.r);
    }
  }

  get(stage: string): StageRecord | undefined {
    return this.records.get(stage);
  }

  all(): StageRecord[] {
    return [...this.records.values()];
  }

  private fd: number | undefined;

  /** One open file for the whole run: a stage appends up to two lines, thousands of stages many. */
  private append(entry: JournalLine): void {
    if (this.fd === undefined) {
      mkdirSync(path.dirname(this.file), { recursive: true });
      this.fd = openSync(this.file, 'a');
    }
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
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

  /** Rewrites the journal with one line per stage when it has grown well past that. */
  compact(): void {
    if (this.lines <= Math.max(64, this.records.size * 2)) return;
    this.close();
    const tmp = `${this.file}.${process.pid}.tmp`;
    const body = [...this.records.values()].map((r) => JSON.stringify({ s: r.stage, f: r.fingerprint, r })).join('\n');
    writeFileSync(tmp, body ? `${body}\n` : '');
    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.file);
    this.lines = this.records.size;
  }
}
