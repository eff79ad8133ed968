// Streams a file line by line as Buffers with bounded memory: large read buffers, no readline,
// no decoding of lines the caller does not need. An over-long line keeps only its head and tail.
import { createReadStream } from 'node:fs';
import { lstatSafe } from './fs-safe.ts';

export interface LineStats {
  lines: number;
  bytes: number;
  /** The file did not end with a newline (typically cut off mid-write). */
  endedWithoutNewline: boolean;
  oversizedLines: number;
}

export interface LineOptions {
  /** Lines longer than this keep only `keepBytes` of head and tail. Default 16 MiB. */
  maxLineBytes?: number;
  keepBytes?: number;
  chunkBytes?: number;
  signal?: AbortSignal;
}

/**
 * The line is `buf[start, end)` (no newline, no trailing CR). `buf` is only valid during the call: it
 * is usually the read buffer itself, so no per-line Buffer object is created.
 */
export type OnLine = (buf: Buffer, start: number, end: number, lineNo: number, oversized: boolean) => void;

export type LinesResult = { ok: true; stats: LineStats } | { ok: false; reason: string };

export async function forEachLine(file: string, onLine: OnLine, options: LineOptions = {}): Promise<LinesResult> {
  const info = await lstatSafe(file);
  if (!info) return { ok: false, reason: 'missing' };
  if (info.kind !== 'file') return { ok: false, reason: `not a regular file (${info.kind})` };
  const splitter = new LineSplitter(onLine, options.maxLineBytes ?? 16 * 1024 * 1024, options.keepBytes ?? 64 * 1024);
  try {
    const stream = createReadStream(file, { highWaterMark: options.chunkBytes ?? 1024 * 1024, signal: options.signal });
    for await (const chunk of stream) splitter.push(chunk as Buffer);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  return { ok: true, stats: splitter.end() };
}

/** Splits a byte stream on '\n' (dropping a trailing '\r'); exported for tests. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partsLength = 0;
  private tail: Buffer = Buffer.alloc(0);
  private oversized = false;
  private readonly stats: LineStats = { lines: 0, bytes: 0, endedWithoutNewline: false, oversizedLines: 0 };

  constructor(
    private readonly onLine: OnLine,
    private readonly maxLineBytes: number,
    private readonly keepBytes: number,
  ) {}

  push(chunk: Buffer): void {
    this.stats.bytes += chunk.length;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      if (this.partsLength === 0 && !this.oversized && nl - start <= this.maxLineBytes) this.direct(chunk, start, nl);
      else this.emit(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  /** Fast path: a whole line inside one chunk, passed by offsets. */
  private direct(chunk: Buffer, start: number, end: number): void {
    const stop = end > start && chunk[end - 1] === 13 ? end - 1 : end;
    this.stats.lines += 1;
    this.onLine(chunk, start, stop, this.stats.lines, false);
  }

  end(): LineStats {
    if (this.partsLength > 0 || this.oversized) {
      this.stats.endedWithoutNewline = true;
      this.emit(Buffer.alloc(0));
    }
    return this.stats;
  }

  private hold(piece: Buffer): void {
    if (this.oversized) {
      this.tail = Buffer.concat([this.tail, piece]).subarray(-this.keepBytes);
      return;
    }
    // Copy: the read buffer is reused by the stream.
    this.parts.push(Buffer.from(piece));
    this.partsLength += piece.length;
    if (this.partsLength > this.maxLineBytes) {
      const joined = Buffer.concat(this.parts);
      this.parts = [joined.subarray(0, this.keepBytes)];
      this.partsLength = this.keepBytes;
      this.tail = joined.subarray(-this.keepBytes);
      this.oversized = true;
    }
  }

  private emit(last: Buffer): void {
    if (!this.oversized && this.partsLength + last.length > this.maxLineBytes) {
      this.hold(last);
      last = Buffer.alloc(0);
    }
    let line: Buffer;
    const oversized = this.oversized;
    if (oversized) {
      const tail = Buffer.concat([this.tail, last]).subarray(-this.keepBytes);
      line = Buffer.concat([...this.parts, tail]);
      this.stats.oversizedLines += 1;
    } else {
      line = this.parts.length === 0 ? last : Buffer.concat([...this.parts, last]);
    }
    this.parts = [];
    this.partsLength = 0;
    this.tail = Buffer.alloc(0);
    this.oversized = false;
    if (line.length > 0 && line[line.length - 1] === 13) line = line.subarray(0, line.length - 1);
    this.stats.lines += 1;
    this.onLine(line, 0, line.length, this.stats.lines, oversized);
  }
}
