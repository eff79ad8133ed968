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
