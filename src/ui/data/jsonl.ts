// JSON Lines helpers for files that may be large and may be being written: only the first line is
// read, and a torn or damaged one is undefined, never thrown.
import { closeSync, openSync, readSync } from 'node:fs';

/** The first line of a file (at most `maxBytes`), parsed; undefined when missing or not JSON. */
export function firstJsonLine(file: string, maxBytes = 64 * 1024): unknown {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(maxBytes);
    const got = readSync(fd, buffer, 0, maxBytes, 0);
    const text = buffer.subarray(0, got).toString('utf8');
    const end = text.indexOf('\n');
    if (end < 0) return undefined;
    return JSON.parse(text.slice(0, end));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
