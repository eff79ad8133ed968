import { readSync } from 'node:fs';

/** The file ends before a byte range its own header or index says it holds: the record is damaged. */
export class CutShort extends Error {}

/** Exactly `length` bytes of an open file from `position` (a read may return fewer: it is repeated). */
export function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) throw new CutShort(`${length} bytes at ${position}`);
    done += n;
  }
  return buffer;
}

/** The file's first line (without its newline) and how many bytes it takes with its newline; CutShort when it has no newline. */
export function readFirstLine(fd: number): { line: Buffer; bytes: number } {
  const chunks: Buffer[] = [];
  for (let position = 0; ; ) {
    const chunk = Buffer.allocUnsafe(65536);
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) throw new CutShort('no first line');
    const newline = chunk.subarray(0, n).indexOf(0x0a);
    if (newline >= 0) {
      chunks.push(chunk.subarray(0, newline));
      return { line: Buffer.concat(chunks), bytes: position + newline + 1 };
    }
    chunks.push(chunk.subarray(0, n));
    position += n;
  }
}

/**
 * The line that starts at `at` in the bytes before `end` (without its newline), read in growing
 * pieces from `firstRead` bytes on; undefined when `at` is not a line's start (the byte before
 * it is no newline; 0 always starts one) or the line has no newline before `end`.
 */
export function readLineAt(fd: number, at: number, end: number, firstRead = 512): Buffer | undefined {
  if (at < 0 || at >= end) return undefined;
  const from = at > 0 ? at - 1 : at;
  for (let length = firstRead; ; length *= 2) {
    const span = Math.min(length, end - from);
    const bytes = readAt(fd, from, span);
    if (at > 0 && bytes[0] !== 0x0a) return undefined;
    const newline = bytes.indexOf(0x0a, at - from);
    if (newline >= 0) return bytes.subarray(at - from, newline);
    if (span < length) return undefined;
  }
}
