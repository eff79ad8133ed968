import { outputsDigest } from './outputs-digest.ts';
import type { StageRecord } from './stage-record.ts';

/**
 * A stage's line: its record (`r`) under its fingerprint (`f`), with what the record says it
 * wrote (`o`, its outputsDigest) at the line's head, where a stage that `needs:` it reads it
 * without parsing the record (lines of an earlier refinery have none); or `f: null`, dropped.
 */
export type JournalLine = { s: string; f: null } | { s: string; f: string; o?: string; r: StageRecord };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The shape the engine relies on; anything else is a journal someone or something damaged. */
function isRecord(r: unknown, stage: string, fingerprint: string): r is StageRecord {
  if (!isObject(r) || r.stage !== stage || r.fingerprint !== fingerprint) return false;
  if (typeof r.runId !== 'string' || typeof r.finishedAt !== 'string' || typeof r.durationMs !== 'number') return false;
  const parts = r.parts;
  if (!isObject(parts) || typeof parts.code !== 'string' || typeof parts.params !== 'string') return false;
  if (!isObject(parts.inputs) || !isObject(parts.deps) || !isObject(parts.schemas) || !isObject(r.outputs)) return false;
  if (parts.values !== undefined && (!isObject(parts.values) || !Object.values(parts.values).every((v) => typeof v === 'string')))
    return false;
  if (parts.reads !== undefined && (!isObject(parts.reads) || !Object.values(parts.reads).every((v) => typeof v === 'string')))
    return false;
  for (const stamp of Object.values(r.outputs)) if (!Array.isArray(stamp) || typeof stamp[3] !== 'string') return false;
  return true;
}

function isJournalLine(entry: unknown): entry is JournalLine {
  if (!isObject(entry) || typeof entry.s !== 'string') return false;
  if (entry.f === null) return true;
  if (typeof entry.f !== 'string' || !isRecord(entry.r, entry.s, entry.f)) return false;
  // The head must say what the record says: it is read in its place.
  return entry.o === undefined || entry.o === outputsDigest(entry.r);
}

/** A stage's line as refinery writes it: the head (`s`, `f`, `o`) first, in that order. */
export function journalLine(record: StageRecord): JournalLine {
  return { s: record.stage, f: record.fingerprint, o: outputsDigest(record), r: record };
}

// The journal is handled as bytes, not decoded text: a line's place is then its byte offset in
// the file (what the journal's index records), and decoding 6 MB to find 13 lines is not paid.

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** How refinery writes an entry: `{"s":"<id>","f":...`; a line in this form is indexed without parsing it. */
const ENTRY_START = Buffer.from('{"s":"');
const ID_END = Buffer.from('","f":');
const DROPPED_END = Buffer.from('"f":null}');
const DIGEST_START = Buffer.from('","o":"');
const RECORD_START = Buffer.from('","r":');

export function lineEnd(bytes: Buffer, start: number): number {
  const end = bytes.indexOf(NEWLINE, start);
  return end < 0 ? bytes.length : end;
}

function startsWith(bytes: Buffer, prefix: Buffer, at: number): boolean {
  return at >= 0 && at + prefix.length <= bytes.length && bytes.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** The stage id of a line in the form refinery writes (an id with no escapes in it), else undefined. */
export function entryId(bytes: Buffer, start: number, end: number): string | undefined {
  if (!startsWith(bytes, ENTRY_START, start)) return undefined;
  const open = start + ENTRY_START.length;
  const close = bytes.indexOf(QUOTE, open);
  if (close < 0 || close >= end || !startsWith(bytes, ID_END, close)) return undefined;
  for (let at = open; at < close; at += 1) if (bytes[at] === BACKSLASH) return undefined;
  return bytes.toString('utf8', open, close);
}

/**
 * What a whole line in the form refinery writes says its stage wrote (`o`, read from its head,
 * the record not parsed); undefined for any other line: dropped, torn, of an earlier refinery.
 */
export function entryDigest(bytes: Buffer, start: number, end: number): string | undefined {
  // Searched within the line: a line of an earlier refinery has no head to find.
  const line = bytes.subarray(start, end);
  if (!endsWhole(line) || entryId(line, 0, line.length) === undefined) return undefined;
  const fingerprint = line.indexOf(ID_END) + ID_END.length + 1;
  if (line[fingerprint - 1] !== QUOTE) return undefined;
  const digestStart = line.indexOf(QUOTE, fingerprint);
  if (digestStart < 0 || !startsWith(line, DIGEST_START, digestStart)) return undefined;
  const open = digestStart + DIGEST_START.length;
  const close = line.indexOf(QUOTE, open);
  if (close < 0 || !startsWith(line, RECORD_START, close)) return undefined;
  for (let at = open; at < close; at += 1) if (line[at] === BACKSLASH) return undefined;
  return line.toString('latin1', open, close);
}

/** A line's entry; 'torn' when it is not whole JSON (cut short), 'damaged' when it is JSON but no entry. */
export function parseLine(bytes: Buffer, start: number, end: number): JournalLine | 'torn' | 'damaged' {
  let entry: unknown;
  try {
    entry = JSON.parse(bytes.toString('utf8', start, end));
  } catch {
    return 'torn';
  }
  return isJournalLine(entry) ? entry : 'damaged';
}

/** How refinery starts a stage's lines. */
export function stagePrefix(stage: string): Buffer {
  return Buffer.from(`{"s":${JSON.stringify(stage)},"f":`);
}

/** Where the stage's line before the one at `before` starts (as refinery writes it), or -1. */
export function previousLine(bytes: Buffer, stage: string, before: number): number {
  const start = stagePrefix(stage);
  const at = before >= 2 ? bytes.lastIndexOf(Buffer.concat([Buffer.from('\n'), start]), before - 2) : -1;
  if (at >= 0) return at + 1;
  return before > 0 && startsWith(bytes, start, 0) ? 0 : -1;
}

export function lineNumberAt(bytes: Buffer, start: number): number {
  let number = 1;
  for (let at = bytes.indexOf(NEWLINE); at >= 0 && at < start; at = bytes.indexOf(NEWLINE, at + 1)) number += 1;
  return number;
}

/** A line that ends as a whole entry does (`}`), so a copy of it unparsed is not a torn line. */
export function endsWhole(line: Buffer): boolean {
  return line.length > 0 && line[line.length - 1] === 0x7d;
}

/** A line that drops its stage's record (`"f":null}`): a compacted journal leaves it out. */
export function isDropLine(line: Buffer): boolean {
  return startsWith(line, DROPPED_END, line.length - DROPPED_END.length);
}
