import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeNoopRecord } from './noop-record.ts';
import { keepHintFile } from './hint-file.ts';
import type { RecordVouch } from './run-manifest.ts';

/**
 * The no-op pre-check's answer (bin/noop-precheck.pl, run by perl while Node starts): for the
 * newest no-op record in `.refinery/state`, which of its files may have changed. Perl compared
 * each file's size, mtime and inode with the record as Node would; a file it found the same
 * needs no stat here. The answer holds for one file only, the one perl read: the record's name
 * and identity (inode, size, mtime; a record is replaced by a rename, so a new one has a new
 * inode) are part of it.
 *
 *     refinery precheck 1 <record name> <inode> <size> <mtime s> <mtime ns> <files>\n<bitmap>
 *
 * The bitmap has a bit per file, bit i of byte i >> 3 for file i, set when it may have changed.
 */
export interface PrecheckAnswer {
  /** The record's file name in `.refinery/state`. */
  record: string;
  inode: number;
  size: number;
  mtimeMs: number;
  files: number;
  bitmap: Uint8Array;
}

const HEADER = /^refinery precheck 1 (noop-[0-9a-f]{16}\.bin) (\d+) (\d+) (-?\d+) (\d+) (\d+)$/;

/** The answer in these bytes, or undefined when they are not a whole one (perl stopped short, or gave none). */
export function parsePrecheckAnswer(bytes: Buffer): PrecheckAnswer | undefined {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  const match = HEADER.exec(bytes.toString('latin1', 0, newline));
  if (!match) return undefined;
  const [inode, size, seconds, nanoseconds, files] = match.slice(2).map(Number) as [number, number, number, number, number];
  const bitmap = bytes.subarray(newline + 1);
  if (bitmap.length !== (files + 7) >> 3) return undefined;
  // Node's own arithmetic for mtimeMs (lib/internal/fs/utils.js), so that equal stats compare equal.
  return { record: match[1] as string, inode, size, mtimeMs: seconds * 1e3 + nanoseconds / 1e6, files, bitmap };
}

/**
 * The answer as a vouch for `recordFile` (in the project `root`), with the record read as
 * compareWithLastRun would; undefined when it does not hold for that file as it is now, and
 * then the run stats everything itself. Perl named the record's paths from `workdir`, its
 * working folder and this process's: they name what Node's stats would only when that is the root.
 */
export function precheckVouch(
  answer: PrecheckAnswer | undefined,
  root: string,
  recordFile: string,
  workdir: string | undefined,
): RecordVouch | undefined {
  if (!answer || workdir !== root || recordFile !== path.join(root, '.refinery', 'state', answer.record)) return undefined;
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    fd = openSync(recordFile, 'r');
    const stat = fstatSync(fd);
    if (stat.ino !== answer.inode || stat.size !== answer.size || stat.mtimeMs !== answer.mtimeMs) return undefined;
    bytes = readFileSync(fd);
  } catch {
    // Gone or unreadable since: the run's own read says why.
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const record = decodeNoopRecord(bytes);
  if (typeof record === 'string' || record.numbers.length !== 3 * answer.files) return undefined;
  return { record, mayHaveChanged: markedFiles(answer.bitmap) };
}

/** The indexes of the bits set: bit i of byte i >> 3 for file i. */
function markedFiles(bitmap: Uint8Array): Set<number> {
  const marked = new Set<number>();
  for (let byte = 0; byte < bitmap.length; byte += 1) {
    const bits = bitmap[byte] as number;
    if (bits === 0) continue;
    for (let bit = 0; bit < 8; bit += 1) if (bits & (1 << bit)) marked.add(8 * byte + bit);
  }
  return marked;
}

/**
 * Records of fewer files are not worth a pre-check: Node stats 2,000 files in ~5 ms, about
 * what perl's start, its forks and the exec cost before Node starts (~7 ms here, measured on a
 * two-file project: 90 ms against 83), while 4,000 gain 11 ms and 20,000 ~45.
 */
export const PRECHECK_MIN_FILES = 2000;

/**
 * Where bin/noop-precheck.pl can answer at all: it needs statx(2) by number, known for Linux
 * on x86_64 and arm64. Elsewhere (macOS, say) starting perl would only delay Node.
 */
export function precheckAnswers(platform: string, arch: string): boolean {
  return platform === 'linux' && (arch === 'x64' || arch === 'arm64');
}

/** The file whose presence tells bin/refinery.js's first line to start the pre-check. */
export function precheckMarker(root: string): string {
  return path.join(root, '.refinery', 'state', 'precheck');
}

/**
 * Keeps the marker in step with the no-op record just written (the newest, which the pre-check
 * compares): present when it is worth a pre-check. Only a hint: a marker out of step costs a
 * pre-check that is not needed, or one not made, never a wrong answer; a failure to write it
 * is left unreported for that reason.
 */
export function markPrecheck(root: string, files: number): void {
  keepHintFile(precheckMarker(root), files >= PRECHECK_MIN_FILES && precheckAnswers(process.platform, process.arch));
}
