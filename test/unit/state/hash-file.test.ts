import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, openSync, closeSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashFile } from '../../../src/engine/state/hash-file.ts';
import { FileHashes, FileReadError } from '../../../src/engine/state/file-hashes.ts';

let dir = '';
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

const MiB = 1024 * 1024;
const OLD = Date.now() / 1000 - 3600;

/** A file of `bytes` random bytes, written in pieces (no buffer of its size). */
function randomFile(bytes: number): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-hash-'));
  const file = path.join(dir, 'big.bin');
  const fd = openSync(file, 'w');
  for (let left = bytes; left > 0; left -= MiB) writeSync(fd, randomBytes(Math.min(MiB, left)));
  closeSync(fd);
  utimesSync(file, OLD, OLD);
  return file;
}

async function streamedSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('base64url');
}

describe('hashing files', () => {
  it('hashFile - a 24 MB file read in chunks has the sha256 of a streamed read, whatever the chunk size and threshold', async () => {
    // Not a multiple of any chunk size: the last read is a short one.
    const size = 24 * MiB + 12_345;
    const file = randomFile(size);
    const expected = await streamedSha256(file);
    expect(hashFile(file, size)).toBe(expected);
    expect(hashFile(file, size, { streamAboveBytes: MiB, chunkBytes: 64 * 1024 + 7 })).toBe(expected);
    expect(hashFile(file, size, { streamAboveBytes: 64 * MiB })).toBe(expected);
  });

  it('FileHashes - a file above the streaming threshold is stamped once, and its unchanged stat is trusted on the next run', () => {
    const size = 12 * MiB;
    const file = randomFile(size);
    const rel = path.basename(file);
    const first = new FileHashes(dir, undefined, { streamAboveBytes: MiB });
    const stamp = first.stamp(rel);
    expect(stamp?.[0]).toBe(size);
    first.save();
    // Same size, mtime and inode, other bytes: the stat cache answers without reading, as for small files.
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('changed'), 0, 7, 0);
    closeSync(fd);
    utimesSync(file, OLD, OLD);
    expect(new FileHashes(dir, undefined, { streamAboveBytes: MiB }).hash(rel)).toBe(stamp?.[3]);
    utimesSync(file, OLD + 10, OLD + 10);
    expect(new FileHashes(dir, undefined, { streamAboveBytes: MiB }).hash(rel)).not.toBe(stamp?.[3]);
  });

  it('FileHashes - a file that exists but cannot be read throws FileReadError naming it, in one read or in chunks; a missing one is undefined', () => {
    // /proc/self/mem is a regular file whose read at offset 0 fails with EIO, for root too.
    for (const streamAboveBytes of [undefined, -1]) {
      const hashes = new FileHashes('/proc/self', undefined, streamAboveBytes === undefined ? {} : { streamAboveBytes });
      expect(() => hashes.stamp('mem')).toThrow(FileReadError);
      expect(() => hashes.hash('mem')).toThrow(/^cannot read mem to fingerprint it: EIO/);
    }
    dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-hash-'));
    writeFileSync(path.join(dir, 'file'), 'x');
    const hashes = new FileHashes(dir);
    expect(hashes.stamp('absent')).toBeUndefined();
    expect(hashes.stamp('file/below-a-file')).toBeUndefined();
  });
});
