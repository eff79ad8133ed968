import { closeSync, linkSync, openSync, readFileSync, readdirSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { isRunning, selfIdentity, type ProcessIdentity } from './process-identity.ts';
import { ensureStateDir, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';

/**
 * One refinery run or watch per project at a time: `.refinery/lock`.
 *
 * Taking the lock is one atomic step: the holder's record (pid, start time, boot id, a random
 * token) is written to a private file first and then hard-linked to `.refinery/lock`; link(2)
 * fails when the name exists, so of any number of processes exactly one succeeds, and nobody
 * ever sees a half-written lock. A lock whose holder is gone (see isRunning: the pid alone is
 * not enough, it may have been reused) is taken over, and that is atomic too: only the process
 * that creates `.refinery/lock.takeover-<stale record's hash>.<n>` (again by link) may remove
 * that stale record, and it does so only after reading the lock again and finding the same
 * record. A taker-over that died half-way leaves its marker; the next one uses `<n+1>`.
 */
export type LockResult =
  | { ok: true; release: () => void }
  | { ok: false; holder: ProcessIdentity | undefined; problem?: undefined }
  | { ok: false; holder?: undefined; problem: WriteProblem };

interface LockRecord extends ProcessIdentity {
  token: string;
}

const MAX_ATTEMPTS = 200;
const MAX_MARKERS = 8;
/** Attempts (about 1 ms apart) an empty lock file is taken for one being written before it counts as stale. */
const EMPTY_GRACE = 50;

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The record in a lock file; anything else (an older refinery's bare pid, garbage) has no live holder. */
function parseRecord(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord> | null;
    if (
      !value ||
      typeof value !== 'object' ||
      !Number.isInteger(value.pid) ||
      typeof value.token !== 'string' ||
      typeof value.host !== 'string'
    )
      return undefined;
    if (value.start !== undefined && typeof value.start !== 'string') return undefined;
    if (value.boot !== undefined && typeof value.boot !== 'string') return undefined;
    return value as LockRecord;
  } catch {
    return undefined;
  }
}

function holderOf(text: string): LockRecord | undefined {
  const record = parseRecord(text);
  return record && isRunning(record) ? record : undefined;
}

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * link(2): creates `to` with the content of `from`, or fails with EEXIST. On a file system
 * without hard links, an exclusive create and a write instead: a reader may then see the file
 * empty for a moment, which the lock treats as busy, not as stale.
 */
function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(code)) throw error;
  }
  try {
    writeRecord(to, readFileSync(from, 'utf8'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone already */
  }
}

type Takeover = 'won' | 'lost' | 'busy';

/**
 * Replaces the stale record `staleText` with ours, unless someone else is doing it or did it.
 * Only the holder of a marker for this stale record removes it, after reading it once more.
 */
function takeOver(lockFile: string, staleText: string, ours: string): Takeover {
  const base = `${lockFile}.takeover-${createHash('sha256').update(staleText).digest('hex').slice(0, 16)}`;
  for (let n = 0; n < MAX_MARKERS; n += 1) {
    const marker = `${base}.${n}`;
    if (tryLink(ours, marker)) {
      try {
        if (readText(lockFile) !== staleText) return 'lost';
        unlinkQuietly(lockFile);
        return tryLink(ours, lockFile) ? 'won' : 'lost';
      } finally {
        unlinkQuietly(marker);
      }
    }
    const markerText = readText(marker);
    if (markerText === undefined) return 'lost';
    // Someone alive is on it; a marker whose maker died (or is unreadable) is passed over.
    if (holderOf(markerText)) return 'busy';
  }
  return 'lost';
}

/** Markers of takeovers whose taker died half-way: harmless, but they would pile up. */
function removeDeadMarkers(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('lock.takeover-')) continue;
    const text = readText(path.join(dir, name));
    if (text !== undefined && !holderOf(text)) unlinkQuietly(path.join(dir, name));
  }
}

function writeRecord(file: string, text: string): void {
  const fd = openSync(file, 'wx', 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

export function acquireProjectLock(root: string, warn?: StateWarn): LockResult {
  const dir = path.join(root, '.refinery');
  const lockFile = path.join(dir, 'lock');
  const record: LockRecord = { ...selfIdentity(), token: randomBytes(8).toString('hex') };
  const ours = `${JSON.stringify(record)}\n`;
  const staged = path.join(dir, `lock.${process.pid}.${record.token}.tmp`);
  try {
    ensureStateDir(root, dir, warn);
    writeRecord(staged, ours);
  } catch (error) {
    unlinkQuietly(staged);
    return { ok: false, problem: writeProblem(lockFile, error) };
  }
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      if (tryLink(staged, lockFile)) return { ok: true, release: () => releaseLock(lockFile, ours, dir) };
      const text = readText(lockFile);
      if (text === undefined) continue;
      if (text === '' && attempt < EMPTY_GRACE) {
        sleepMs(1);
        continue;
      }
      const holder = holderOf(text);
      if (holder) return { ok: false, holder };
      const outcome = takeOver(lockFile, text, staged);
      if (outcome === 'won') return { ok: true, release: () => releaseLock(lockFile, ours, dir) };
      if (outcome === 'busy') sleepMs(1);
    }
    return { ok: false, holder: parseRecord(readText(lockFile) ?? '') };
  } catch (error) {
    return { ok: false, problem: writeProblem(lockFile, error) };
  } finally {
    unlinkQuietly(staged);
  }
}

function releaseLock(lockFile: string, ours: string, dir: string): void {
  removeDeadMarkers(dir);
  // Nobody takes over a live holder's record, so what is there is still ours.
  if (readText(lockFile) === ours) rmSync(lockFile, { force: true });
}
