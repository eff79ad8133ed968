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
