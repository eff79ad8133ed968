// Line-by-line reading of JSON Lines files that may be large and may be being written: a torn last
// line or a damaged one is skipped, never thrown.
import { createReadStream } from 'node:fs';
import { closeSync, openSync, readSync } from 'node:fs';
import { createInterface } from 'node:readline';

export async function forEachJsonLine(file: string, visit: (value: unknown) => void): Promise<boolean> {
  let stream;
  try {
    stream = createReadStream(file, { encoding: 'utf8' });
  } catch {
    return false;
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      visit(value);
    }
    return true;
  } catch {
    return false;
  } finally {
    lines.close();
    stream.destroy();
  }
}

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
