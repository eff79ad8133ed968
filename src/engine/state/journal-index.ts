import { closeSync, fstatSync, openSync, rmSync, type Stats } from 'node:fs';
import { writeFileAtomicSync } from './atomic-file.ts';
import { DamagedIndex, encodeHashedIndex, HashedIndexReader } from './hashed-index.ts';
import { CutShort, readAt, readFirstLine, readLineAt } from './read-at.ts';

/**
 * Where each stage's last line starts in a stage journal, kept beside it as
 * `<pipeline>.jsonl.index` (a hashed index: hashed-index.ts), so that a run checking what one
 * changed file reaches reads the dozen lines it needs of a 10,000-stage journal rather than all
 * 6 MB of it (~10 ms). The journal stays the truth; the index only says where to look:
 * - It covers the journal's first `covered` bytes as they were when it was written. The journal
 *   only grows between rewrites, so the lines past them are read and scanned as before, and a
 *   stage's line there stands over the one the index points at.
 * - It holds only for the file it was written for: the same device, inode and birth time, at
 *   least `covered` bytes long, a line ending where the covered part ends.
 * - A line it points at must be a whole entry of the stage looked up. Anything else, and the
 *   reader reads the whole journal instead, as without an index.
 * - The writer removes it before the journal is rewritten or set aside, and writes a new one
 *   after a rewrite. A journal under INDEX_MIN_BYTES has none: scanning it costs less.
 * Losing it costs time, never an answer: writing it may fail quietly.
 */
const FORM = 'refinery-journal-index/1';

/** A journal smaller than this is scanned whole (~1.5 ms a MiB), which costs less than keeping its index. */
export const INDEX_MIN_BYTES = 1 << 20;

/**
 * Past this many bytes of lines after what the index covers, the run reads the journal whole
 * once and writes the index again (~15 ms for 10,000 stages): each run scans those lines, and
 * the journal is rewritten only when it has grown a quarter (1.7 MB for 10,000 stages).
 */
export const INDEX_REFRESH_BYTES = 1 << 18;

/** The file an index was written for. */
export interface JournalIdentity {
  dev: number;
  ino: number;
  born: number;
}

export function journalIdentity(stat: Stats): JournalIdentity {
  return { dev: stat.dev, ino: stat.ino, born: stat.birthtimeMs };
}

interface Header {
  form: typeof FORM;
  journal: JournalIdentity;
  /** Bytes of the journal the index covers. */
  covered: number;
  /** Lines in the covered bytes, and stages with a line there. */
  lines: number;
  stages: number;
  buckets: number;
  entryBytes: number;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function isHeader(value: unknown): value is Header {
  if (typeof value !== 'object' || value === null) return false;
  const h = value as Record<string, unknown>;
  const journal = h.journal as Record<string, unknown> | null | undefined;
  if (h.form !== FORM || typeof journal !== 'object' || journal === null) return false;
  if (typeof journal.dev !== 'number' || typeof journal.ino !== 'number' || typeof journal.born !== 'number') return false;
  return [h.covered, h.lines, h.stages, h.buckets, h.entryBytes].every(isCount);
}

export function sameJournal(a: JournalIdentity, b: JournalIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.born === b.born;
}

export function journalIndexFile(journal: string): string {
  return `${journal}.index`;
}

/** Removes the journal's index, if any; one that cannot be removed is found out when read. */
export function removeJournalIndex(journal: string): void {
  try {
    rmSync(journalIndexFile(journal), { force: true });
  } catch {
    /* a stale index does not hold for the journal that replaces it */
  }
}

/**
 * Writes the index of the journal `identity` names: `offsets` gives each stage's last line in
 * its first `covered` bytes, which hold `lines` lines and end with a newline.
 */
export function writeJournalIndex(
  journal: string,
  identity: JournalIdentity,
  covered: number,
  lines: number,
  offsets: ReadonlyMap<string, number>,
): void {
  const index = encodeHashedIndex(offsets);
  const header: Header = {
    form: FORM,
    journal: identity,
    covered,
    lines,
    stages: offsets.size,
    buckets: index.buckets,
    entryBytes: index.lines.length,
  };
  try {
    writeFileAtomicSync(journalIndexFile(journal), Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), index.table, index.lines]));
  } catch {
    /* the next run scans the journal, and writes the index again */
  }
}

/** A journal line is read this many bytes at first (a record is ~700). */
const LINE_CHUNK = 4096;
const NEWLINE = 0x0a;

/** An open journal read through its index. */
export class JournalIndex {
  private constructor(
    private readonly journalFd: number,
    private readonly indexFd: number,
    private readonly reader: HashedIndexReader,
    private readonly header: Header,
  ) {}

  /** The index of the journal open as `journalFd` when one holds for it (the caller closes `journalFd` otherwise). */
  static open(journal: string, journalFd: number): JournalIndex | undefined {
    const stat = fstatSync(journalFd);
    if (stat.size < INDEX_MIN_BYTES) return undefined;
    let indexFd: number;
    try {
      indexFd = openSync(journalIndexFile(journal), 'r');
    } catch {
      return undefined;
    }
    try {
      const first = readFirstLine(indexFd);
      const header: unknown = JSON.parse(first.line.toString('utf8'));
      if (!isHeader(header) || !sameJournal(header.journal, journalIdentity(stat))) throw new DamagedIndex('another journal');
      if (header.covered < 1 || header.covered > stat.size || readAt(journalFd, header.covered - 1, 1)[0] !== NEWLINE)
        throw new DamagedIndex('not a line end');
      const linesAt = first.bytes + 4 * header.buckets;
      if (fstatSync(indexFd).size !== linesAt + header.entryBytes) throw new DamagedIndex('size');
      const reader = new HashedIndexReader(indexFd, {
        tableAt: first.bytes,
        buckets: header.buckets,
        linesAt,
        linesBytes: header.entryBytes,
      });
      return new JournalIndex(journalFd, indexFd, reader, header);
    } catch {
      closeSync(indexFd);
      return undefined;
    }
  }

  get covered(): number {
    return this.header.covered;
  }

  get lines(): number {
    return this.header.lines;
  }

  get stages(): number {
    return this.header.stages;
  }

  /** The journal past what the index covers, as it is now. */
  tail(): Buffer {
    const size = fstatSync(this.journalFd).size;
    return readAt(this.journalFd, this.covered, size - this.covered);
  }

  /** Whether the stage has a line in the covered bytes; 'unsure' when the index cannot say. */
  has(stage: string): boolean | 'unsure' {
    const at = this.offsetOf(stage);
    return at === 'unsure' ? at : at !== undefined;
  }

  /** The stage's last line in the covered bytes (without its newline); undefined when it has none; 'unsure' when the index cannot say. */
  lineOf(stage: string): Buffer | undefined | 'unsure' {
    const at = this.offsetOf(stage);
    if (at === undefined || at === 'unsure') return at;
    try {
      return readLineAt(this.journalFd, at, this.covered, LINE_CHUNK) ?? 'unsure';
    } catch (error) {
      if (error instanceof CutShort) return 'unsure';
      throw error;
    }
  }

  private offsetOf(stage: string): number | undefined | 'unsure' {
    try {
      const at = this.reader.get(stage);
      if (at === undefined) return undefined;
      return isCount(at) && at < this.covered ? at : 'unsure';
    } catch (error) {
      if (error instanceof DamagedIndex || error instanceof CutShort) return 'unsure';
      throw error;
    }
  }

  /** Closes the index and the journal it was opened with. */
  close(): void {
    closeSync(this.indexFd);
    closeSync(this.journalFd);
  }
}
