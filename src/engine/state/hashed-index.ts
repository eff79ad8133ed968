import { readAt, readLineAt } from './read-at.ts';

/**
 * Entries `key → JSON value` in a file, found by reading a few small byte ranges rather than
 * the whole index: a run that needs twenty of forty thousand entries costs the same as one
 * that has forty. Two sections, placed by the caller (their offsets in its header):
 * - the table: a power-of-two count of buckets (at least twice the entries, so probe chains
 *   stay short and one is always empty), each a uint32, little-endian whatever the machine,
 *   holding the byte offset of an entry's line in the lines section, 0 for an empty bucket;
 *   a key goes in the first empty bucket from `fnv1a32(key) mod buckets` on (linear probing);
 * - the lines: a newline, then one line per entry, `,"<key>":<JSON value>` (JSON.stringify
 *   never writes a newline, so each line starts after one and the offset 0 is never a line).
 * A reader checks each line against the key asked for, so a damaged or foreign table or line
 * is found out (thrown as DamagedIndex or CutShort) rather than answered from.
 */
export class DamagedIndex extends Error {}

/**
 * 32-bit FNV-1a (Fowler–Noll–Vo) over bytes: tiny, fast on short keys, spreads similar paths
 * (f1.txt, f2.txt) over the table, and is fixed by its definition, so any writer's table works
 * for any reader.
 */
export function fnv1a32(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
}

/** The smallest power of two that is at least twice the entries (and 8). */
export function bucketCount(entries: number): number {
  let buckets = 8;
  while (buckets < 2 * entries) buckets *= 2;
  return buckets;
}

/** fnv1a32 of the key's UTF-8 bytes; an ASCII key (a path, nearly always) without encoding it first. */
export function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    const code = key.charCodeAt(i);
    if (code >= 0x80) return fnv1a32(Buffer.from(key, 'utf8'));
    hash = Math.imul(hash ^ code, 0x01000193);
  }
  return hash >>> 0;
}

function homeBucket(key: string, buckets: number): number {
  return keyHash(key) & (buckets - 1);
}

export interface EncodedHashedIndex {
  buckets: number;
  table: Buffer;
  lines: Buffer;
}

/**
 * The table and the lines for entries with distinct keys. The lines come from one JS string,
 * under 2^30 UTF-16 units and so under 4 GiB as UTF-8: every offset fits a uint32.
 */
export function encodeHashedIndex(entries: Iterable<readonly [string, unknown]>): EncodedHashedIndex {
  const lines: string[] = ['\n'];
  const placed: Array<[key: string, offset: number]> = [];
  let offset = 1;
  for (const [key, value] of entries) {
    const line = `,${JSON.stringify(key)}:${JSON.stringify(value)}\n`;
    lines.push(line);
    placed.push([key, offset]);
    offset += Buffer.byteLength(line);
  }
  const buckets = bucketCount(placed.length);
  // Probed in memory (in the machine's order), written to the file little-endian.
  const taken = new Uint8Array(buckets);
  const table = Buffer.alloc(4 * buckets);
  for (const [key, at] of placed) {
    let bucket = homeBucket(key, buckets);
    while (taken[bucket] === 1) bucket = (bucket + 1) & (buckets - 1);
    taken[bucket] = 1;
    table.writeUInt32LE(at, 4 * bucket);
  }
  return { buckets, table, lines: Buffer.from(lines.join(''), 'utf8') };
}

/** Where the sections lie in the file (absolute byte positions) and how big they are. */
export interface HashedIndexLayout {
  tableAt: number;
  buckets: number;
  linesAt: number;
  linesBytes: number;
}

/** Buckets read at once: a probe chain at most half full rarely runs past them. */
const WINDOW = 16;
/** Bytes read first for a line: most entries fit, a longer one is read again, twice as long. */
const FIRST_READ = 512;
const COMMA = 0x2c;
const QUOTE = 0x22;

/** Lookups in a hashed index of an open file; the caller owns (and closes) the descriptor. */
export class HashedIndexReader {
  private windowFirst = 0;
  private window: Buffer = Buffer.alloc(0);

  constructor(
    private readonly fd: number,
    private readonly layout: HashedIndexLayout,
  ) {
    const { tableAt, buckets, linesAt, linesBytes } = layout;
    const sizes = [tableAt, buckets, linesAt, linesBytes];
    if (!sizes.every((n) => Number.isSafeInteger(n) && n >= 0)) throw new DamagedIndex('layout');
    // A power of two, at most 2^30 so that `& (buckets - 1)` stays in int32 range.
    if (buckets < 1 || buckets > 2 ** 30 || (buckets & (buckets - 1)) !== 0) throw new DamagedIndex(`${buckets} buckets`);
    if (linesBytes < 1) throw new DamagedIndex('no lines');
  }

  /** The key's value, parsed; undefined when the index has no such key. */
  get(key: string): unknown {
    const { buckets } = this.layout;
    const prefix = Buffer.from(`,${JSON.stringify(key)}:`, 'utf8');
    let bucket = homeBucket(key, buckets);
    for (let probes = 0; probes < buckets; probes += 1) {
      const at = this.bucket(bucket);
      if (at === 0) return undefined;
      const line = this.lineAt(at);
      if (line.length >= prefix.length && prefix.equals(line.subarray(0, prefix.length))) return parse(line, prefix.length, key);
      // Another key placed on the same chain: probe on, though only past a line that is a key's.
      if (line[0] !== COMMA || line[1] !== QUOTE) throw new DamagedIndex(`bucket ${bucket}: not a key's line`);
      bucket = (bucket + 1) & (buckets - 1);
    }
    throw new DamagedIndex('no empty bucket');
  }

  /** A bucket's offset, from the window of buckets last read when it holds it. */
  private bucket(n: number): number {
    const inWindow = n - this.windowFirst;
    if (inWindow < 0 || 4 * inWindow >= this.window.length) {
      this.windowFirst = n;
      this.window = readAt(this.fd, this.layout.tableAt + 4 * n, 4 * Math.min(WINDOW, this.layout.buckets - n));
      return this.window.readUInt32LE(0);
    }
    return this.window.readUInt32LE(4 * inWindow);
  }

  /** The line at `at` in the lines section, without its newline; it must start just after one. */
  private lineAt(at: number): Buffer {
    const { linesAt, linesBytes } = this.layout;
    if (at < 1 || at >= linesBytes) throw new DamagedIndex(`offset ${at} past the lines`);
    const line = readLineAt(this.fd, linesAt + at, linesAt + linesBytes, FIRST_READ);
    if (!line) throw new DamagedIndex(`offset ${at} is not a whole line's start`);
    return line;
  }
}

function parse(line: Buffer, from: number, key: string): unknown {
  try {
    return JSON.parse(line.toString('utf8', from));
  } catch {
    throw new DamagedIndex(`${key}: not JSON`);
  }
}
