// One run's events.jsonl folded into what the run page shows (params, stages, loop iterations),
// read incrementally: the byte offset read so far is remembered and only what was appended since is
// read, a chunk at a time with the event loop free between chunks, one read at a time however many
// requests ask. A stage's log lines are kept as byte ranges, not text: its tail is read back from
// the file when asked, so a 194 MB journal costs a few numbers a line.
import { open, type FileHandle } from 'node:fs/promises';
import type { ArtifactIssue, RunEvent, StageStatus } from '../../engine/types/events.ts';
import { isObject } from './jsonl.ts';

export type RunStageStatus = StageStatus | 'running';

export interface RunStage {
  id: string;
  status: RunStageStatus;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  attempts: number;
  /** Why it started (stage-start), or why it failed / was skipped (stage-end). */
  startReason?: string;
  reason?: string;
  summary?: string;
  outputs?: Record<string, string>;
  issues?: ArtifactIssue[];
  rejectedDir?: string;
  progress?: number;
  /** The `refinery worker` that ran it (`run --workers`); absent where it ran on the coordinator. */
  worker?: string;
}

export interface LogLine {
  time: string;
  stream: string;
  message: string;
}

export interface LoopIteration {
  loop: string;
  iteration: number;
  decision: string;
  time: string;
}

const CHUNK = 256 * 1024;
/** A line longer than this is not an event the engine writes: it is skipped, not held. */
const MAX_LINE = 16 * 1024 * 1024;
/** Log lines read back in one read when they lie this close together. */
const MAX_SPAN = 4 * 1024 * 1024;
const NO_BYTES = Buffer.alloc(0);

export class RunJournal {
  params: Record<string, unknown> = {};
  readonly stages = new Map<string, RunStage>();
  readonly loops: LoopIteration[] = [];
  /** Per stage: start and length of each stage-log line, flat. */
  private readonly logRanges = new Map<string, number[]>();
  private offset = 0;
  private partial: Buffer = NO_BYTES;
  /** Inside a line past MAX_LINE: everything up to the next newline is dropped. */
  private skipping = false;
  private reading: Promise<void> | undefined;

  constructor(readonly file: string) {}

  /** Reads what was appended since the last call (all of it the first time). */
  catchUp(): Promise<void> {
    this.reading ??= this.readNew().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** The last `tail` log lines of a stage, and how many it wrote. */
  async logs(stageId: string, tail: number): Promise<{ lines: LogLine[]; total: number }> {
    const ranges = this.logRanges.get(stageId) ?? [];
    const total = ranges.length / 2;
    const first = Math.max(0, total - tail);
    if (first === total) return { lines: [], total };
    let handle: FileHandle;
    try {
      handle = await open(this.file, 'r');
    } catch {
      return { lines: [], total };
    }
    try {
      const spanStart = ranges[first * 2] as number;
      const spanEnd = (ranges[total * 2 - 2] as number) + (ranges[total * 2 - 1] as number);
      const span = spanEnd - spanStart <= MAX_SPAN ? await readAt(handle, spanStart, spanEnd - spanStart) : undefined;
      const lines: LogLine[] = [];
      for (let i = first; i < total; i += 1) {
        const at = ranges[i * 2] as number;
        const length = ranges[i * 2 + 1] as number;
        const bytes = span ? span.subarray(at - spanStart, at - spanStart + length) : await readAt(handle, at, length);
        const value = parse(bytes.toString('utf8'));
        if (isObject(value)) lines.push({ time: String(value.time), stream: String(value.stream), message: String(value.message) });
      }
      return { lines, total };
    } finally {
      await handle.close();
    }
  }

  private async readNew(): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(this.file, 'r');
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(CHUNK);
      for (;;) {
        const { size } = await handle.stat();
        // Shorter than what was read: another file now; start over.
        if (size < this.offset) this.reset();
        if (size === this.offset) return;
        const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, size - this.offset), this.offset);
        if (bytesRead <= 0) return;
        this.take(buffer.subarray(0, bytesRead));
        // A turn of the event loop between chunks: other requests are answered meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await handle.close();
    }
  }

  private reset(): void {
    this.params = {};
    this.stages.clear();
    this.loops.length = 0;
    this.logRanges.clear();
    this.offset = 0;
    this.partial = NO_BYTES;
    this.skipping = false;
  }

  /** A chunk read at `this.offset`: its complete lines are folded, the rest kept for the next. */
  private take(chunk: Buffer): void {
    const base = this.offset - this.partial.length;
    const data = this.partial.length > 0 ? Buffer.concat([this.partial, chunk]) : chunk;
    this.offset += chunk.length;
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      if (this.skipping) this.skipping = false;
      else if (nl > start) this.line(data.toString('utf8', start, nl), base + start, nl - start);
      start = nl + 1;
    }
    // Copied: `chunk` is the reader's buffer, reused for the next read.
    this.partial = Buffer.from(data.subarray(start));
    if (this.partial.length > MAX_LINE) {
      this.partial = NO_BYTES;
      this.skipping = true;
    }
  }

  private stage(id: string): RunStage {
    let s = this.stages.get(id);
    if (!s) {
      s = { id, status: 'running', startedAt: null, endedAt: null, durationMs: null, attempts: 0 };
      this.stages.set(id, s);
    }
    return s;
  }

  private line(text: string, at: number, length: number): void {
    const value = parse(text);
    if (!isObject(value)) return;
    const e = value as unknown as RunEvent;
    switch (e.type) {
      case 'run-start':
        this.params = isObject(e.params) ? e.params : {};
        break;
      case 'stage-start': {
        const s = this.stage(e.stage);
        s.status = 'running';
        s.startedAt ??= e.time;
        s.attempts = Math.max(s.attempts, e.attempt);
        s.startReason = e.reason;
        if (e.worker) s.worker = e.worker;
        break;
      }
      case 'stage-progress':
        this.stage(e.stage).progress = e.fraction;
        break;
      case 'stage-log': {
        let ranges = this.logRanges.get(e.stage);
        if (!ranges) {
          ranges = [];
          this.logRanges.set(e.stage, ranges);
        }
        ranges.push(at, length);
        break;
      }
      case 'stage-end': {
        const s = this.stage(e.stage);
        s.status = e.status;
        s.endedAt = e.time;
        s.durationMs = e.durationMs;
        s.attempts = Math.max(s.attempts, e.attempts);
        s.startedAt ??= new Date(Date.parse(e.time) - e.durationMs).toISOString();
        for (const key of ['reason', 'summary', 'outputs', 'issues', 'rejectedDir', 'worker'] as const)
          if (e[key] !== undefined) (s as unknown as Record<string, unknown>)[key] = e[key];
        break;
      }
      case 'loop-iteration':
        this.loops.push({ loop: e.loop, iteration: e.iteration, decision: e.decision, time: e.time });
        break;
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function readAt(handle: FileHandle, at: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, at);
  return buffer.subarray(0, bytesRead);
}
