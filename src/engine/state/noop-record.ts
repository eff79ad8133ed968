/**
 * The no-op record's file format (see run-manifest.ts for what it means). It is read at the
 * start of every run and holds a stat for each of up to tens of thousands of files, so it is
 * laid out to be read without parsing them:
 *
 *     refinery noop 2\n
 *     {header JSON: key, pipeline, stages, skipped, dirs, probes, files, pathBytes}\n
 *     the files' paths, UTF-8, separated by NUL (no path contains one)
 *     zero bytes up to a multiple of 8
 *     float64 CHECK, then per file: size (or MISSING, UNSETTLED), mtimeMs, inode
 *
 * The numbers are in the machine's byte order, read through a Float64Array over the file's
 * own bytes; a record written in another byte order fails CHECK and counts as damaged.
 */
const MAGIC = 'refinery noop 2\n';
const CHECK = 1.5;
/** The file did not exist. */
export const MISSING = -1;
/** Its stat was taken too soon after it was written to be trusted: the next run checks its content (settled-stat.ts). */
export const UNSETTLED = -2;

export interface NoopRecord {
  key: string;
  pipeline: string;
  stages: string[];
  /** Stages the run skipped (a false `when`), with the reason: a no-op reports them skipped again. */
  skipped: Record<string, string>;
  /** [folder, mtimeMs | null (missing) | 'unsettled', ...] */
  dirs: Array<string | number | null>;
  /** [path, exists, ...] */
  probes: Array<string | boolean>;
  paths: string[];
  /** Three per path: size (or MISSING, UNSETTLED), mtimeMs, inode. */
  numbers: Float64Array;
}

interface Header {
  key: string;
  pipeline: string;
  stages: string[];
  skipped: Record<string, string>;
  dirs: Array<string | number | null>;
  probes: Array<string | boolean>;
  files: number;
  pathBytes: number;
}

/**
 * The record's bytes. No path holds a NUL (the file system refuses one, and a stage whose input
 * names one fails, so no record is written); were one to, the record would read back damaged.
 */
export function encodeNoopRecord(record: NoopRecord): Buffer {
  const joined = record.paths.join('\0');
  const pathBytes = Buffer.byteLength(joined);
  const header: Header = {
    key: record.key,
    pipeline: record.pipeline,
    stages: record.stages,
    skipped: record.skipped,
    dirs: record.dirs,
    probes: record.probes,
    files: record.paths.length,
    pathBytes,
  };
  const head = Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`);
  const numbersAt = align8(head.length + pathBytes);
  const out = Buffer.alloc(numbersAt + 8 * (1 + 3 * record.paths.length));
  head.copy(out, 0);
  out.write(joined, head.length);
  const numbers = new Float64Array(out.buffer, out.byteOffset + numbersAt, 1 + 3 * record.paths.length);
  numbers[0] = CHECK;
  numbers.set(record.numbers.subarray(0, 3 * record.paths.length), 1);
  return out;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHeader(value: unknown): value is Header {
  if (!isObject(value) || typeof value.key !== 'string' || typeof value.pipeline !== 'string') return false;
  if (!Array.isArray(value.stages) || !value.stages.every((s) => typeof s === 'string')) return false;
  if (!isObject(value.skipped) || !Object.values(value.skipped).every((r) => typeof r === 'string')) return false;
  if (!Array.isArray(value.dirs) || value.dirs.length % 2 !== 0 || !Array.isArray(value.probes) || value.probes.length % 2 !== 0)
    return false;
  for (let i = 0; i < value.dirs.length; i += 2) {
    const [d, mtime] = [value.dirs[i], value.dirs[i + 1]];
    if (typeof d !== 'string' || !(typeof mtime === 'number' || mtime === null || mtime === 'unsettled')) return false;
  }
  for (let i = 0; i < value.probes.length; i += 2)
    if (typeof value.probes[i] !== 'string' || typeof value.probes[i + 1] !== 'boolean') return false;
  return (
    Number.isSafeInteger(value.files) &&
    Number.isSafeInteger(value.pathBytes) &&
    (value.files as number) >= 0 &&
    (value.pathBytes as number) >= 0
  );
}

/** The record in these bytes, or a reason they are not one. */
export function decodeNoopRecord(bytes: Buffer): NoopRecord | string {
  if (bytes.toString('latin1', 0, MAGIC.length) !== MAGIC) return 'is not a no-op record';
  const newline = bytes.indexOf(0x0a, MAGIC.length);
  if (newline < 0) return 'is cut short';
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString('utf8', MAGIC.length, newline));
  } catch {
    return 'has a header that is not valid JSON';
  }
  if (!isHeader(header)) return 'is not a no-op record';
  const pathsAt = newline + 1;
  const numbersAt = align8(pathsAt + header.pathBytes);
  const count = 1 + 3 * header.files;
  if (bytes.length !== numbersAt + 8 * count) return 'is cut short or too long';
  const at = bytes.byteOffset + numbersAt;
  const numbers =
    at % 8 === 0 ? new Float64Array(bytes.buffer, at, count) : new Float64Array(Uint8Array.prototype.slice.call(bytes, numbersAt).buffer);
  if (numbers[0] !== CHECK) return 'was written in another byte order';
  const pathsEnd = pathsAt + header.pathBytes;
  if (separators(bytes, pathsAt, pathsEnd) !== Math.max(0, header.files - 1)) return 'has a path list of the wrong length';
  let paths: string[] | undefined;
  const record = {
    key: header.key,
    pipeline: header.pipeline,
    stages: header.stages,
    skipped: header.skipped,
    dirs: header.dirs,
    probes: header.probes,
    numbers: numbers.subarray(1),
  };
  // Made into strings when first read: a no-op the watch vouched for reads none of them.
  return Object.defineProperty(record, 'paths', {
    get: () => (paths ??= header.files === 0 ? [] : bytes.toString('utf8', pathsAt, pathsEnd).split('\0')),
    enumerable: true,
  }) as NoopRecord;
}

/** How many NULs (path separators) lie between `start` and `end`, counted without decoding the paths. */
function separators(bytes: Buffer, start: number, end: number): number {
  // latin1 maps each byte to one character, and String#indexOf finds a NUL natively.
  const text = bytes.toString('latin1', start, end);
  let count = 0;
  for (let at = text.indexOf('\0'); at >= 0; at = text.indexOf('\0', at + 1)) count += 1;
  return count;
}
