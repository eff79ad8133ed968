import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Observations } from './observations.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';

/**
 * The no-op check. After a run in which every stage ended up to date, refinery records the
 * stat (size, mtime, inode) of every file and folder that run looked at. The next run with the
 * same pipeline text and params first compares those stats; when none changed, every stage is
 * still up to date and nothing needs loading, expanding or hashing — the way make and ninja
 * decide a no-op from stats alone. Any difference falls back to the full fingerprint check.
 */
export interface NoopRecord {
  key: string;
  pipeline: string;
  stages: string[];
  /** Stages the run skipped (a false `when`), with the reason: a no-op reports them skipped again. */
  skipped?: Record<string, string>;
  files: Record<string, [number, number, number] | null>;
  dirs: Record<string, number | null>;
  probes: Record<string, boolean>;
}

/** One record per pipeline file (by its absolute path). */
export function manifestFile(root: string, pipelineFile: string): string {
  const id = createHash('sha256').update(path.resolve(pipelineFile)).digest('hex').slice(0, 16);
  return path.join(root, '.refinery', 'state', `noop-${id}.json`);
}

export function manifestKey(parts: {
  version: string;
  pipelineFile: string;
  pipelineText: string;
  params: Readonly<Record<string, string>>;
}): string {
  const params = Object.entries(parts.params).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([parts.version, parts.pipelineFile, parts.pipelineText, params]))
    .digest('hex');
}

function fileStat(abs: string): [number, number, number] | null {
  try {
    const st = statSync(abs, { throwIfNoEntry: false });
    return st ? [st.size, st.mtimeMs, st.ino] : null;
  } catch {
    return null;
  }
}

function dirStat(abs: string): number | null {
  try {
    return statSync(abs, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}

export function dropManifest(root: string, pipelineFile: string): void {
  try {
    rmSync(manifestFile(root, pipelineFile), { force: true });
  } catch {
    // No folder to hold one (ENOTDIR): there is no record to drop.
  }
}

/** The record of what a run looked at: the stats taken when each thing was read, never fresh ones (see Observations). */
export function noopRecord(
  key: string,
  pipeline: string,
  stages: readonly string[],
  seen: Observations,
  skipped: ReadonlyMap<string, string>,
): NoopRecord {
  return {
    key,
    pipeline,
    stages: [...stages],
    skipped: Object.fromEntries(skipped),
    files: Object.fromEntries([...seen.files].sort(([a], [b]) => (a < b ? -1 : 1))),
    dirs: Object.fromEntries([...seen.dirs].sort(([a], [b]) => (a < b ? -1 : 1))),
    probes: Object.fromEntries([...seen.probes].sort()),
  };
}

/** Writes a record; a write that fails (a full disk) is returned: the next run checks fully. */
export function writeNoopRecord(root: string, pipelineFile: string, record: NoopRecord, warn?: StateWarn): WriteProblem | undefined {
  const file = manifestFile(root, pipelineFile);
  try {
    ensureStateDir(root, path.dirname(file), warn);
    writeFileAtomicSync(file, JSON.stringify(record));
  } catch (error) {
    return writeProblem(file, error);
  }
  return undefined;
}

/** Records what the run looked at; a write that fails (a full disk) is returned: the next run checks fully. */
export function writeManifest(
  root: string,
  pipelineFile: string,
  pipeline: string,
  key: string,
  stages: readonly string[],
  seen: Observations,
  skipped: ReadonlyMap<string, string>,
  warn?: StateWarn,
): WriteProblem | undefined {
  return writeNoopRecord(root, pipelineFile, noopRecord(key, pipeline, stages, seen, skipped), warn);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record as written, or a reason it is not one. */
export function readManifest(file: string): NoopRecord | string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // No record yet, or no state folder at all (the run sets that aside): a full check.
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : `cannot be read (${code})`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'is not valid JSON';
  }
  if (!isPlainObject(value) || typeof value.key !== 'string' || typeof value.pipeline !== 'string' || !Array.isArray(value.stages))
    return 'is not a no-op record';
  if (!isPlainObject(value.files) || !isPlainObject(value.dirs) || !isPlainObject(value.probes)) return 'is not a no-op record';
  for (const stage of value.stages) if (typeof stage !== 'string') return 'is not a no-op record';
  if (value.skipped !== undefined && (!isPlainObject(value.skipped) || Object.values(value.skipped).some((r) => typeof r !== 'string')))
    return 'is not a no-op record';
  return value as unknown as NoopRecord;
}

/** The reason given for a stage found up to date from stats alone. */
export const UNCHANGED_BY_STAT = 'up to date: nothing it read changed since the last run';

export interface ChangedFiles {
  /** Files (as recorded) whose stat differs from the last run's. */
  files: string[];
  /** The stages the last run skipped, with the reason. */
  skipped: Map<string, string>;
  /** The last run's record, to carry over what this run does not look at again. */
  previous: Observations;
  /** Every stage of the last run, in its order. */
  stages: string[];
}

/**
 * What a file watcher can say of a record it saw hold: the record as read then, and the only
 * recorded paths that may have changed since (every other one is as recorded, no stat needed).
 */
export interface RecordVouch {
  record: NoopRecord;
  mayHaveChanged: Iterable<string>;
}

function sameStat(now: [number, number, number] | null, stamp: unknown): boolean {
  if (now === null || stamp === null) return now === stamp;
  return Array.isArray(stamp) && now[0] === stamp[0] && now[1] === stamp[1] && now[2] === stamp[2];
}

/** The comparison when a watcher vouches for all but a few paths: those are stat'ed, the rest taken as recorded. */
function compareVouched(root: string, manifest: NoopRecord, mayHaveChanged: Iterable<string>): LastRunComparison {
  const files: string[] = [];
  for (const f of mayHaveChanged) {
    if (!Object.hasOwn(manifest.files, f)) continue;
    if (!sameStat(fileStat(path.resolve(root, f)), manifest.files[f])) files.push(f);
  }
  const skipped = new Map(Object.entries(manifest.skipped ?? {}));
  if (files.length === 0) return { unchanged: { pipeline: manifest.pipeline, stages: manifest.stages, skipped } };
  const changed = new Set(files);
  const previous = new Observations();
  for (const [f, stamp] of Object.entries(manifest.files)) if (!changed.has(f)) previous.files.set(f, stamp);
  for (const [d, mtime] of Object.entries(manifest.dirs)) previous.dirs.set(d, mtime);
  for (const [p, answer] of Object.entries(manifest.probes)) previous.probes.set(p, answer);
  return { changed: { files, previous, skipped, stages: manifest.stages } };
}

/** What the last run recorded, compared with the disk now. */
export type LastRunComparison =
  /** Nothing it looked at changed: every stage is still up to date. */
  | { unchanged: { pipeline: string; stages: string[]; skipped: Map<string, string> } }
  /** Only these files changed: the stages they reach need checking. */
  | { changed: ChangedFiles };

/**
 * Compares the last run's record with the disk, reading it and stat'ing each file once.
 * Undefined when there is no record for this pipeline text and params, or a folder listing or
 * an `exists()` answer changed (new stages may have appeared), so only a full check will do.
 */
export function compareWithLastRun(
  root: string,
  pipelineFile: string,
  key: string,
  warn?: StateWarn,
  /** A watcher's word on the record: only the paths it names need a stat. */
  vouch?: RecordVouch,
): LastRunComparison | undefined {
  const file = manifestFile(root, pipelineFile);
  const manifest = vouch ? vouch.record : readManifest(file);
  const corrupt = (problem: string): undefined => {
    setAsideAndWarn(root, file, problem, warn, 'every stage is checked in full');
    return undefined;
  };
  if (typeof manifest === 'string') return corrupt(manifest);
  if (!manifest || manifest.key !== key) return undefined;
  for (const [d, mtime] of Object.entries(manifest.dirs)) if (dirStat(path.resolve(root, d)) !== mtime) return undefined;
  for (const [p, answer] of Object.entries(manifest.probes)) if (existsSync(path.resolve(root, p)) !== answer) return undefined;
  if (vouch) return compareVouched(root, manifest, vouch.mayHaveChanged);
  const files: string[] = [];
  const previous = new Observations();
  for (const [f, stamp] of Object.entries(manifest.files)) {
    if (stamp !== null && !(Array.isArray(stamp) && stamp.length === 3)) return corrupt(`has a malformed stat for '${f}'`);
    const now = fileStat(path.resolve(root, f));
    const same = now === null || stamp === null ? now === stamp : now[0] === stamp[0] && now[1] === stamp[1] && now[2] === stamp[2];
    if (same) previous.files.set(f, stamp);
    else files.push(f);
  }
  const skipped = new Map(Object.entries(manifest.skipped ?? {}));
  if (files.length === 0) return { unchanged: { pipeline: manifest.pipeline, stages: manifest.stages, skipped } };
  for (const [d, mtime] of Object.entries(manifest.dirs)) previous.dirs.set(d, mtime);
  for (const [p, answer] of Object.entries(manifest.probes)) previous.probes.set(p, answer);
  return { changed: { files, previous, skipped, stages: manifest.stages } };
}
