// A piece of a text file for a page, a range at a time, widened so the redactor that cleans it
// sees every secret whole: on to the next line break, past the end of a PEM key begun in it, and
// back to the start of a PEM key the range begins inside.
import { closeSync, openSync, readSync } from 'node:fs';

/** How far a piece may run past its length to end at a line break (or a PEM key's end). */
const LINE_SLACK = 64 * 1024;
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY/;

function readAt(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  const n = buffer.length > 0 ? readSync(fd, buffer, 0, buffer.length, start) : 0;
  return buffer.subarray(0, n);
}

/** Where in `text` a PEM private key begins that does not end in it; -1 when none. */
export function openPem(text: string): number {
  let open = -1;
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m !== null; m = PEM_BEGIN.exec(text)) open = PEM_END.test(text.slice(m.index)) ? -1 : m.index;
  return open;
}

/**
 * `[offset, offset + length)` of a file, widened so the redactor sees every secret whole: on to
 * the next line break, past the end of a PEM key begun in it, and back to the start of a PEM key
 * the offset falls inside.
 */
export function readPiece(file: string, offset: number, length: number, size: number): { start: number; bytes: Buffer } {
  const fd = openSync(file, 'r');
  try {
    let start = offset;
    const before = readAt(fd, Math.max(0, offset - LINE_SLACK), offset).toString('latin1');
    const begun = openPem(before);
    if (begun !== -1) start = offset - before.length + begun;
    const bytes = readAt(fd, start, Math.min(size, offset + length + LINE_SLACK));
    const wanted = offset + length - start;
    if (start + bytes.length >= size && bytes.length <= wanted) return { start, bytes };
    let newline = bytes.indexOf(10, Math.max(0, wanted - 1));
    const pem = newline === -1 ? -1 : openPem(bytes.subarray(0, newline + 1).toString('latin1'));
    const endAt = pem === -1 ? -1 : bytes.indexOf('-----END', pem);
    if (endAt !== -1) newline = bytes.indexOf(10, endAt);
    if (newline !== -1) return { start, bytes: bytes.subarray(0, newline + 1) };
    if (start + bytes.length >= size) return { start, bytes };
    // No line break near: cut at `length`, backed off to a UTF-8 character boundary.
    let cut = Math.min(wanted, bytes.length);
    while (cut > 0 && ((bytes[cut] as number) & 0xc0) === 0x80) cut -= 1;
    return { start, bytes: bytes.subarray(0, cut) };
  } finally {
    closeSync(fd);
  }
}
