import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

export interface HashFileOptions {
  /** Files up to this size are read with one call (fast for the many small files); larger ones in chunks. */
  streamAboveBytes?: number;
  /** Size of the one buffer a large file is read through. */
  chunkBytes?: number;
}

export const STREAM_ABOVE_BYTES = 8 * 1024 * 1024;
export const CHUNK_BYTES = 1024 * 1024;

/** Reused by every chunked read: hashing is synchronous, so no two reads share it at once. */
let sharedChunk: Buffer | undefined;

function chunkBuffer(bytes: number): Buffer {
  if (bytes !== CHUNK_BYTES) return Buffer.allocUnsafe(bytes);
  sharedChunk ??= Buffer.allocUnsafe(CHUNK_BYTES);
  return sharedChunk;
}

export function digest(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('base64url');
}

/** sha256 as 64 lowercase hex digits (record names and keys, the remote cache's digests). */
export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * sha256 (base64url) of an open file's bytes from its current position to its end, with memory
 * bounded by one chunk whatever the size (readFileSync fails above 2 GiB and holds the whole
 * file). `size` is the file's size as stat'ed, used only to choose one read or chunks. Throws
 * what the read throws.
 */
export function hashOpenFile(fd: number, size: number, options: HashFileOptions = {}): string {
  if (size <= (options.streamAboveBytes ?? STREAM_ABOVE_BYTES)) return digest(readFileSync(fd));
  const hash = createHash('sha256');
  const chunk = chunkBuffer(options.chunkBytes ?? CHUNK_BYTES);
  for (;;) {
    const read = readSync(fd, chunk, 0, chunk.length, null);
    if (read === 0) break;
    hash.update(chunk.subarray(0, read));
  }
  return hash.digest('base64url');
}

/** hashOpenFile on a path; throws what open or read throws (ENOENT for a file removed meanwhile). */
export function hashFile(file: string, size: number, options: HashFileOptions = {}): string {
  const fd = openSync(file, 'r');
  try {
    return hashOpenFile(fd, size, options);
  } finally {
    closeSync(fd);
  }
}
