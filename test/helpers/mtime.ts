import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { expect } from 'vitest';

/** The mtime in nanoseconds, as the file system keeps it. */
export function mtimeNs(file: string): bigint {
  return statSync(file, { bigint: true }).mtimeNs;
}

/** Sets the mtime to the nanosecond (GNU touch keeps them; fs.utimes goes through a double and does not). */
export function setMtime(file: string, ns: bigint): void {
  const stamp = `@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
  const touched = spawnSync('touch', ['-m', '-d', stamp, file], { encoding: 'utf8' });
  expect(touched.status, touched.stderr).toBe(0);
  expect(mtimeNs(file)).toBe(ns);
}
