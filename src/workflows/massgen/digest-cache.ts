// The summary's memory of every analysis.json it has read, so an unchanged turn is not read again:
// by stat (size, mtime, inode) when the file was already older than a second when it was read
// (a later change in the same clock tick could otherwise hide), else by content hash (read, not
// parsed). One JSON file under the project's cache folder, written atomically.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { digestOf } from './runs-digest.ts';
import type { TurnDigest } from './runs-summary-model.ts';

// 2: digests carry deniedTools.
const VERSION = 2;
/** A file whose mtime is within this of the moment it was read may still change unseen. */
const RACY_MS = 1000;

interface CacheEntry {
  size: number;
  mtimeMs: number;
  ino: number;
  /** When the file was read (or its hash confirmed), epoch ms. */
  checkedAt: number;
  sha1: string;
  digest: TurnDigest;
}

export interface DigestStats {
  /** Known by stat: not opened. */
  cached: number;
  /** Read and hashed, content unchanged: not parsed. */
  hashed: number;
  /** Read and parsed (new or changed). */
  parsed: number;
}

export type DigestRead = { ok: true; digest: TurnDigest } | { ok: false; problem: string };

export class DigestCache {
  private entries = new Map<string, CacheEntry>();
  /** What this process already read, so a second look costs nothing (forget() after rewriting a file). */
  private readonly memo = new Map<string, DigestRead>();
  private dirty = false;
  readonly stats: DigestStats = { cached: 0, hashed: 0, parsed: 0 };

  constructor(private readonly file: string | null) {
    if (!file) return;
    try {
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { version?: number; entries?: Record<string, CacheEntry> };
      if (raw.version === VERSION && raw.entries && typeof raw.entries === 'object') this.entries = new Map(Object.entries(raw.entries));
    } catch {
      // No cache yet, or a damaged one: every file is read again.
    }
  }

  /** The digest of one analysis.json (absolute path); `stat`: the caller's fresh stat of it, if it has one. */
  read(file: string, stat?: Stats): DigestRead {
    let result = this.memo.get(file);
    if (!result) {
      result = this.readFile(file, stat);
      this.memo.set(file, result);
    }
    return result;
  }

  /** The file was rewritten: the next read looks at it again. */
  forget(file: string): void {
    this.memo.delete(file);
  }

  private readFile(file: string, stat: Stats | undefined): DigestRead {
    let st;
    try {
      st = stat ?? statSync(file);
    } catch (error) {
      return { ok: false, problem: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
    const known = this.entries.get(file);
    if (known && known.size === st.size && known.mtimeMs === st.mtimeMs && known.ino === st.ino && st.mtimeMs < known.checkedAt - RACY_MS) {
      this.stats.cached += 1;
      return { ok: true, digest: known.digest };
    }
    const checkedAt = Date.now();
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      return { ok: false, problem: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
    const sha1 = createHash('sha1').update(bytes).digest('hex');
    const stamp = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, checkedAt, sha1 };
    if (known && known.sha1 === sha1) {
      this.stats.hashed += 1;
      this.entries.set(file, { ...stamp, digest: known.digest });
      this.dirty = true;
      return { ok: true, digest: known.digest };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      return { ok: false, problem: `not valid JSON (${(error as Error).message.slice(0, 120)})` };
    }
    const digest = digestOf(parsed);
    if (!digest) return { ok: false, problem: 'not a MassGen turn analysis (kind massgen-turn-analysis with source.session)' };
    this.stats.parsed += 1;
    this.entries.set(file, { ...stamp, digest });
    this.dirty = true;
    return { ok: true, digest };
  }

  /** Forgets files under `dir` that were not read this time (deleted turns). */
  forgetUnder(dir: string, seen: ReadonlySet<string>): void {
    const prefix = dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`;
    for (const key of this.entries.keys()) {
      if (key.startsWith(prefix) && !seen.has(key)) {
        this.entries.delete(key);
        this.dirty = true;
      }
    }
  }

  /** Writes the cache if anything changed (temp file + rename); a failure only costs the next run time. */
  save(): void {
    if (!this.file || !this.dirty) return;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      writeFileSync(tmp, JSON.stringify({ version: VERSION, entries: Object.fromEntries(this.entries) }));
      renameSync(tmp, this.file);
      this.dirty = false;
    } catch {
      rmSync(tmp, { force: true });
    }
  }
}
