// Filesystem access for log trees: lstat only (symlinks are never followed), capped reads, no throws.
import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface Entry {
  name: string;
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
  bytes: number;
  mtimeMs: number;
}

/** Entries of a directory, sorted by name; [] when it cannot be read. Symlinks are reported, never resolved. */
export async function listDir(dir: string): Promise<Entry[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  names.sort();
  const out: Entry[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    const info = await lstatSafe(full);
    if (info) out.push({ name, path: full, ...info });
  }
  return out;
}

export async function lstatSafe(file: string): Promise<Omit<Entry, 'name' | 'path'> | null> {
  try {
    const s = await lstat(file);
    const kind = s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
    return { kind, bytes: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return null;
  }
}

export type ReadResult = { ok: true; text: string; truncated: boolean; bytes: number } | { ok: false; reason: string };

/** Reads at most `maxBytes` of a regular file (not a symlink) as UTF-8. */
export async function readCapped(file: string, maxBytes: number): Promise<ReadResult> {
  const info = await lstatSafe(file);
  if (!info) return { ok: false, reason: 'missing' };
  if (info.kind !== 'file') return { ok: false, reason: `not a regular file (${info.kind})` };
  let handle;
  try {
    handle = await open(file, 'r');
    const size = Math.min(info.bytes, maxBytes);
    const buffer = Buffer.alloc(size);
    let offset = 0;
    while (offset < size) {
      const { bytesRead } = await handle.read(buffer, offset, size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return { ok: true, text: buffer.subarray(0, offset).toString('utf8'), truncated: info.bytes > maxBytes, bytes: info.bytes };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  } finally {
    await handle?.close();
  }
}

/** Natural number suffix of `prefix_N` names, or null. */
export function numberedName(name: string, prefix: string): number | null {
  const match = new RegExp(`^${prefix}_(\\d+)$`).exec(name);
  return match ? Number(match[1]) : null;
}

export const SNAPSHOT_DIR = /^\d{8}_\d{6}_\d{6}$/;
