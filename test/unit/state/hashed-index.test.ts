// The hashed index the plan record's lookups go through: every key found by a few small reads,
// collisions probed past, and a damaged or cut-short index thrown as such, never answered from.
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bucketCount,
  DamagedIndex,
  type EncodedHashedIndex,
  encodeHashedIndex,
  fnv1a32,
  HashedIndexReader,
  keyHash,
} from '../../../src/engine/state/hashed-index.ts';
import { CutShort } from '../../../src/engine/state/read-at.ts';

let dir = '';
const fds: number[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-hashed-index-'));
});
afterEach(() => {
  for (const fd of fds.splice(0)) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes before and after the index, as a header and the instance lines lie around it in the plan record. */
const BEFORE = Buffer.from('{"header":true}\n');
const AFTER = Buffer.from('{"instance":1}\n');

/** A reader over the index written to a file between other bytes; `edit` changes the encoded index first. */
function readerOf(index: EncodedHashedIndex, edit?: (file: Buffer) => Buffer): HashedIndexReader {
  let bytes: Buffer = Buffer.concat([BEFORE, index.table, index.lines, AFTER]);
  if (edit) bytes = edit(bytes);
  const file = path.join(dir, `index-${fds.length}`);
  writeFileSync(file, bytes);
  const fd = openSync(file, 'r');
  fds.push(fd);
  const tableAt = BEFORE.length;
  return new HashedIndexReader(fd, {
    tableAt,
    buckets: index.buckets,
    linesAt: tableAt + index.table.length,
    linesBytes: index.lines.length,
  });
}

function home(key: string, buckets: number): number {
  return fnv1a32(Buffer.from(key, 'utf8')) & (buckets - 1);
}

/** `count` keys whose probe chains all start at bucket `at` of a table of `buckets`. */
function keysAt(at: number, buckets: number, count: number): string[] {
  const keys: string[] = [];
  for (let n = 0; keys.length < count; n += 1) if (home(`k${n}`, buckets) === at) keys.push(`k${n}`);
  return keys;
}

/** The bucket (index) whose offset points at the key's line. */
function bucketOf(index: EncodedHashedIndex, key: string): number {
  const at = index.lines.indexOf(`\n,${JSON.stringify(key)}:`) + 1;
  for (let b = 0; b < index.buckets; b += 1) if (index.table.readUInt32LE(4 * b) === at) return b;
  throw new Error(`no bucket for ${key}`);
}

/** The file with a bucket's uint32 replaced. */
function withBucket(bucket: number, value: number): (file: Buffer) => Buffer {
  return (file) => {
    file.writeUInt32LE(value, BEFORE.length + 4 * bucket);
    return file;
  };
}

describe('fnv1a32', () => {
  it('fnv1a32 - the published 32-bit FNV-1a test vectors', () => {
    expect(fnv1a32(Buffer.from(''))).toBe(0x811c9dc5);
    expect(fnv1a32(Buffer.from('a'))).toBe(0xe40c292c);
    expect(fnv1a32(Buffer.from('foobar'))).toBe(0xbf9cf968);
  });

  it('keyHash - the fnv1a32 of the key as UTF-8, ASCII or not', () => {
    for (const key of ['', 'a', 'foobar', 'i:src/dir/f1.txt', 'o:naïve', 'n:日本語', 'i:emoji 😀 \\ "q"']) {
      expect(keyHash(key)).toBe(fnv1a32(Buffer.from(key, 'utf8')));
    }
  });
});

describe('encodeHashedIndex', () => {
  it('bucketCount - a power of two at least twice the entries', () => {
    for (const entries of [0, 1, 4, 5, 1000, 40_000]) {
      const buckets = bucketCount(entries);
      expect(buckets & (buckets - 1)).toBe(0);
      expect(buckets).toBeGreaterThanOrEqual(2 * entries);
      expect(buckets).toBeLessThan(Math.max(16, 4 * entries));
    }
  });

  it('encodeHashedIndex - each bucket holds, little-endian, the offset of its line after a newline', () => {
    const index = encodeHashedIndex([['only', [1, 2]]]);
    expect(index.buckets).toBe(8);
    expect(index.table.length).toBe(32);
    const bucket = home('only', 8);
    expect(index.table.readUInt32LE(4 * bucket)).toBe(1);
    expect([...index.table].filter((byte) => byte !== 0)).toEqual([1]);
    expect(index.table[4 * bucket]).toBe(1);
    expect(index.lines.toString()).toBe('\n,"only":[1,2]\n');
  });
});

describe('HashedIndexReader', () => {
  it('HashedIndexReader - every key of many is found with its value, and keys never written are absent', () => {
    const entries: Array<[string, unknown]> = [];
    for (let n = 0; n < 5000; n += 1) entries.push([`i:src/dir${n % 37}/f${n}.txt`, [`stage${n}`, n]]);
    entries.push(['o:naïve/日本語 "quoted" back\\slash', ['unicode']]);
    const reader = readerOf(encodeHashedIndex(entries));
    for (const [key, value] of entries) expect(reader.get(key)).toEqual(value);
    for (let n = 0; n < 500; n += 1) expect(reader.get(`i:src/dir${n % 37}/g${n}.txt`)).toBeUndefined();
    expect(reader.get('i:src/dir0/f0.tx')).toBeUndefined();
    expect(reader.get('o:naïve/日本語 "quoted" back\\slas')).toBeUndefined();
  });

  it('HashedIndexReader - keys that share a bucket are found along the probe chain, across the end of the table', () => {
    // Three keys in eight buckets, all starting at the last: they lie in buckets 7, 0 and 1.
    const [a, b, c, absent] = keysAt(7, 8, 4) as [string, string, string, string];
    const index = encodeHashedIndex([
      [a, 'A'],
      [b, 'B'],
      [c, 'C'],
    ]);
    expect(index.buckets).toBe(8);
    expect([bucketOf(index, a), bucketOf(index, b), bucketOf(index, c)]).toEqual([7, 0, 1]);
    const reader = readerOf(index);
    expect([reader.get(c), reader.get(b), reader.get(a)]).toEqual(['C', 'B', 'A']);
    // Probed past every line of the chain (each another key's) to the empty bucket after it.
    expect(reader.get(absent)).toBeUndefined();
  });

  it('HashedIndexReader - a line longer than the first read is read whole', () => {
    const long = 'x'.repeat(20_000);
    const reader = readerOf(
      encodeHashedIndex([
        ['n:big', [long]],
        ['n:small', []],
      ]),
    );
    expect(reader.get('n:big')).toEqual([long]);
    expect(reader.get('n:small')).toEqual([]);
  });

  it('HashedIndexReader - a bucket pointing past the lines is damage', () => {
    const index = encodeHashedIndex([['i:a', ['x']]]);
    const reader = readerOf(index, withBucket(bucketOf(index, 'i:a'), index.lines.length + 5));
    expect(() => reader.get('i:a')).toThrow(DamagedIndex);
  });

  it('HashedIndexReader - a bucket pointing into the middle of a line is damage', () => {
    // At `,"y"]`: it looks like the start of another key's line, so only its place gives it away.
    const index = encodeHashedIndex([['i:a', ['x', 'y']]]);
    const reader = readerOf(index, withBucket(bucketOf(index, 'i:a'), index.lines.indexOf(',"y"')));
    expect(() => reader.get('i:a')).toThrow(DamagedIndex);
  });

  it('HashedIndexReader - a line whose key differs is passed over, never answered from', () => {
    const [a, b] = keysAt(2, 8, 2) as [string, string];
    const index = encodeHashedIndex([
      [a, 'A'],
      [b, 'B'],
    ]);
    expect([bucketOf(index, a), bucketOf(index, b)]).toEqual([2, 3]);
    // a's bucket now points at b's line, and the bucket after it is empty.
    const reader = readerOf(index, (file) => withBucket(3, 0)(withBucket(2, index.table.readUInt32LE(12))(file)));
    expect(reader.get(a)).toBeUndefined();
    expect(reader.get(b)).toBe('B');
  });

  it("HashedIndexReader - a line on the probe chain that is no key's line is damage", () => {
    const index = encodeHashedIndex([['i:a', ['x']]]);
    const reader = readerOf(index, (file) => {
      file[BEFORE.length + index.table.length + 1] = 'X'.charCodeAt(0);
      return file;
    });
    expect(() => reader.get('i:a')).toThrow(DamagedIndex);
  });

  it('HashedIndexReader - a value that is not JSON is damage', () => {
    const index = encodeHashedIndex([['n:a', [1, 2]]]);
    const reader = readerOf(index, (file) => {
      const at = file.indexOf('[1,2]');
      file.write('[1,"', at);
      return file;
    });
    expect(() => reader.get('n:a')).toThrow(DamagedIndex);
  });

  it('HashedIndexReader - a file cut short is damage, not an answer', () => {
    const entries: Array<[string, unknown]> = [];
    for (let n = 0; n < 100; n += 1) entries.push([`o:out/${n}`, [`s${n}`]]);
    const index = encodeHashedIndex(entries);
    // Cut in the last line: keys early in the lines are still there, the last one is not.
    const reader = readerOf(index, (file) => file.subarray(0, BEFORE.length + index.table.length + index.lines.length - 3));
    expect(reader.get('o:out/0')).toEqual(['s0']);
    expect(() => reader.get('o:out/99')).toThrow(CutShort);
    // A table cut after its first two buckets, and a key whose chain starts past them.
    const table = readerOf(index, (file) => file.subarray(0, BEFORE.length + 8));
    const past = entries.map(([key]) => key).find((key) => home(key, index.buckets) >= 2) as string;
    expect(() => table.get(past)).toThrow(CutShort);
  });

  it('HashedIndexReader - a table with no empty bucket is damage, not an endless probe', () => {
    const index = encodeHashedIndex([['i:a', ['x']]]);
    const full = Buffer.alloc(index.table.length);
    for (let b = 0; b < index.buckets; b += 1) full.writeUInt32LE(1, 4 * b);
    const reader = readerOf({ ...index, table: full });
    expect(reader.get('i:a')).toEqual(['x']);
    expect(() => reader.get('i:b')).toThrow(DamagedIndex);
  });

  it('HashedIndexReader - a layout whose bucket count is not a power of two is damage', () => {
    const index = encodeHashedIndex([['i:a', ['x']]]);
    for (const buckets of [0, 6, 2 ** 31, 1.5, -8]) {
      expect(() => readerOf({ ...index, buckets })).toThrow(DamagedIndex);
    }
  });
});
