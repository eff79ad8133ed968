import { existsSync, readFileSync, rmSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import type { Observations } from './observations.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import { sha256Hex } from './hash-file.ts';
import { decodeNoopRecord, encodeNoopRecord, MISSING, type NoopRecord, UNSETTLED } from './noop-record.ts';
import { workingFolder } from '../paths/working-folder.ts';
import { ensureStateDir, setAsideAndWarn, type StateWarn } from './set-aside.ts';
import { settledStat } from './settled-stat.ts';
import { writeProblem, type WriteProblem } from './write-problem.ts';

/**
 * The no-op check. After a run in which every stage ended up to date, refinery records the
 * stat (size, mtime, inode) of every file and folder that run looked at, the pipeline file
 * included. The next run with the same pipeline file and params first compares those stats;
 * when none changed, every stage is still up to date and nothing needs loading, expanding or
 * hashing — the way make and ninja decide a no-op from stats alone. Any difference falls back
 * to the fingerprint check of the stages it reaches: for changed files only, those the last run's
 * plan says read or write them (plan-record.ts); for a changed folder listing, the pipeline is
 * expanded again and its new stages and those whose inputs list the folder are checked
 * (affected.ts); for a changed `exists()` answer or anything no stage explains, every stage.
 *
 * A stat taken too soon after its file was written (settled-stat.ts) could miss a rewrite of
 * the same size in the same clock tick: such a file is recorded unsettled, and the next run
 * counts it as changed and checks it by content (an unchanged hash reruns nothing, and the
 * record written then is settled). Every stat is taken after the run started, so a file is
 * unsettled when its mtime is within the window before the run's start or later. The outputs
 * the run published itself are the exception: it hashed the staged copy that it then renamed
 * into place, and a write to the published file within the same tick would be a write racing
 * the publish itself, which no tool can order; so right after a build nothing is unsettled
 * unless something else wrote during the run.
 */

/** One record per pipeline file (by its absolute path). */
export function manifestFile(root: string, pipelineFile: string): string {
  return path.join(root, '.refinery', 'state', `noop-${recordId(pipelineFile)}.bin`);
}

const recordIds = new Map<string, string>();

/** Asked for several times a run (the record, the plan record, dropping them): hashed once. */
function recordId(pipelineFile: string): string {
  const absolute = path.resolve(pipelineFile);
  let id = recordIds.get(absolute);
  if (id === undefined) {
    id = sha256Hex(absolute).slice(0, 16);
    recordIds.set(absolute, id);
  }
  return id;
}

/**
 * The key a record is kept under: refinery's version, the pipeline file and the params. The
 * pipeline's text is not in it: the run records the file's stat like any file it read, so an
 * edit shows as a changed file (one that always sends the run to the full check), and a no-op
 * reads none of it.
 */
export function manifestKey(parts: { version: string; pipelineFile: string; params: Readonly<Record<string, string>> }): string {
  const params = Object.entries(parts.params).sort(([a], [b]) => (a < b ? -1 : 1));
  // 'noop 2': never the key of a record (or plan record) in an earlier form.
  return sha256Hex(JSON.stringify(['noop 2', parts.version, parts.pipelineFile, params]));
}

const STAT_OPTIONS = { throwIfNoEntry: false } as const;

function dirStat(abs: string): number | null {
  try {
    return statSync(abs, STAT_OPTIONS)?.mtimeMs ?? null;
  } catch {
    return null;
  }
}

export function dropManifest(root: string, pipelineFile: string): void {
  const file = manifestFile(root, pipelineFile);
  try {
    rmSync(file, { force: true });
    // The JSON form an earlier refinery wrote; this one no longer reads it.
    rmSync(file.replace(/\.bin$/, '.json'), { force: true });
  } catch {
    // No folder to hold one (ENOTDIR): there is no record to drop.
  }
}

/**
 * The last run's record, for what this run does not look at again: its unchanged files are
 * copied into the new record as they are (no per-file object is made of them).
 */
export class PreviousRecord {
  constructor(
    private readonly record: NoopRecord,
    /** 1 for each file whose stat changed. */
    private readonly changed: Uint8Array,
  ) {}

  get dirs(): ReadonlyArray<string | number | null> {
    return this.record.dirs;
  }

  get probes(): ReadonlyArray<string | boolean> {
    return this.record.probes;
  }

  /**
   * Copies every file whose stat did not change, unless `seen` has it (this run's stat stands) or
   * `leaveOut` says so, into `paths` and `numbers` from their start; returns how many.
   */
  carryInto(paths: string[], numbers: Float64Array, seen: ReadonlyMap<string, unknown>, leaveOut?: (rel: string) => boolean): number {
    const { paths: from, numbers: stats } = this.record;
    const changed = this.changed;
    let n = 0;
    for (let i = 0; i < from.length; i += 1) {
      const rel = from[i] as string;
      if (changed[i] === 1 || seen.has(rel) || leaveOut?.(rel)) continue;
      paths[n] = rel;
      numbers[3 * n] = stats[3 * i] as number;
      numbers[3 * n + 1] = stats[3 * i + 1] as number;
      numbers[3 * n + 2] = stats[3 * i + 2] as number;
      n += 1;
    }
    return n;
  }

  get size(): number {
    return this.record.paths.length;
  }
}

/**
 * The record of what a run looked at: the stats taken when each thing was read, never fresh
 * ones (see Observations), over what the last record held that this run did not look at again.
 */
export function buildNoopRecord(
  key: string,
  pipeline: string,
  stages: readonly string[],
  seen: Observations,
  skipped: ReadonlyMap<string, string>,
  /** The last run's record, when this run checked only what changed: what it did not look at again is carried over. */
  previous?: PreviousRecord,
  /** Files trusted by their folders' listings, not recorded one by one (final inputs: final-inputs.ts). */
  leaveOut?: (rel: string) => boolean,
): NoopRecord {
  const paths: string[] = new Array((previous?.size ?? 0) + seen.files.size);
  const numbers = new Float64Array(3 * paths.length);
  let count = previous ? previous.carryInto(paths, numbers, seen.files, leaveOut) : 0;
  for (const [rel, stat] of seen.files) {
    if (leaveOut?.(rel)) continue;
    const n = 3 * count;
    paths[count] = rel;
    if (stat === null) numbers[n] = MISSING;
    else numbers[n] = seen.written.has(rel) || settledStat(stat[1], seen.startedAt) ? stat[0] : UNSETTLED;
    numbers[n + 1] = stat?.[1] ?? 0;
    numbers[n + 2] = stat?.[2] ?? 0;
    count += 1;
  }
  paths.length = count;
  return {
    key,
    pipeline,
    stages: [...stages],
    skipped: Object.fromEntries(skipped),
    dirs: pairs(previous?.dirs, seen.dirs, (d, mtime) =>
      mtime === null || seen.written.has(d) || settledStat(mtime, seen.startedAt) ? mtime : 'unsettled',
    ),
    probes: pairs(previous?.probes, seen.probes, (_p, answer) => answer),
    paths,
    numbers: count * 3 === numbers.length ? numbers : numbers.slice(0, count * 3),
  };
}

/** Writes a record; a write that fails (a full disk) is returned: the next run checks fully. */
export function writeNoopRecord(root: string, pipelineFile: string, record: NoopRecord, warn?: StateWarn): WriteProblem | undefined {
  const file = manifestFile(root, pipelineFile);
  try {
    ensureStateDir(root, path.dirname(file), warn);
    writeFileAtomicSync(file, encodeNoopRecord(record));
  } catch (error) {
    return writeProblem(file, error);
  }
  return undefined;
}

/** [name, value, ...]: the last record's pairs that this run did not see again, then this run's. */
function pairs<T, U>(
  previous: ReadonlyArray<string | T> | undefined,
  current: ReadonlyMap<string, T>,
  value: (name: string, seen: T) => U,
): Array<string | T | U> {
  const out: Array<string | T | U> = [];
  if (previous)
    for (let i = 0; i < previous.length; i += 2)
      if (!current.has(previous[i] as string)) out.push(previous[i] as string, previous[i + 1] as T);
  for (const [name, seen] of current) out.push(name, value(name, seen));
  return out;
}

/** The record as written, or a reason it is not one; undefined when there is none. */
export function readManifest(file: string): NoopRecord | string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // No record yet, or no state folder at all (the run sets that aside): a full check.
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : `cannot be read (${code})`;
  }
  return decodeNoopRecord(bytes);
}

/** The reason given for a stage found up to date from stats alone. */
export const UNCHANGED_BY_STAT = 'up to date: nothing it read changed since the last run';

export interface ChangedFiles {
  /** Files (as recorded) whose stat differs from the last run's, or that were unsettled. */
  files: string[];
  /** Folders whose listing (mtime) differs from the last run's: new stages or inputs may be there. */
  dirs: string[];
  /** The stages the last run skipped, with the reason. */
  skipped: Map<string, string>;
  /** The last run's record, to carry over what this run does not look at again. */
  previous: PreviousRecord;
  /** Every stage of the last run, in its order. */
  stages: string[];
}

/**
 * What a file watcher can say of a record it saw hold: the record as read then, and the indexes
 * (in `record.paths`) of the only files that may have changed since; every other one is as
 * recorded, no stat needed.
 */
export interface RecordVouch {
  record: NoopRecord;
  mayHaveChanged: ReadonlySet<number>;
}

/** How a record came to hold: found unchanged, or written anew (with the record, or only the paths the run looked at). */
export type RecordUpdate = { kind: 'confirmed' } | { kind: 'written'; record?: NoopRecord; observed: Iterable<string> | undefined };

/** What the last run recorded, compared with the disk now. */
export type LastRunComparison =
  /** Nothing it looked at changed: every stage is still up to date. */
  (
    | { unchanged: { pipeline: string; stages: string[]; skipped: Map<string, string> } }
    /** Only these files changed: the stages they reach need checking. */
    | { changed: ChangedFiles }
  ) & {
    /** The record's files, and how many of them a vouch spared a stat. */
    checked: { files: number; vouched: number };
  };

/**
 * How to name a recorded path to statSync cheaply (path.resolve costs more than the stat's
 * own work in JavaScript). Paths are recorded relative to the root (absolute ones, outside the
 * project, as they are): `root/rel` names the file path.resolve(root, rel) names, and plain
 * `rel` does when the process runs in the root (the kernel then walks fewer folders). Only a
 * path with `..` differs (path.resolve goes up lexically, the kernel through symbolic links),
 * so those go through path.resolve, as before.
 */
function statPrefix(root: string): string {
  // With the working folder removed (undefined), files are named from the root.
  if (workingFolder() === root) return '';
  return root.endsWith('/') ? root : `${root}/`;
}

/**
 * Compares the last run's record with the disk, reading it and stat'ing each file and folder
 * once. Undefined when there is no record for this pipeline file and params, or an `exists()`
 * answer changed (a `when:` or a param's default may now be another), so only a full check will
 * do. A changed folder listing is returned with the changed files: the run expands the pipeline
 * again and checks the stages that list the folder (affected.ts).
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
  const record = vouch ? vouch.record : readManifest(file);
  if (typeof record === 'string') {
    setAsideAndWarn(root, file, record, warn, 'every stage is checked in full');
    return undefined;
  }
  if (!record || record.key !== key) return undefined;
  // Paths are read only for the files looked at (`paths` makes them strings when first read).
  const { dirs, probes, numbers } = record;
  const count = numbers.length / 3;
  for (let i = 0; i < probes.length; i += 2) if (existsSync(path.resolve(root, probes[i] as string)) !== probes[i + 1]) return undefined;
  const prefix = statPrefix(root);
  let changed: Uint8Array | undefined;
  const only = vouch?.mayHaveChanged;
  let vouched = 0;
  let paths: string[] | undefined;
  for (let i = 0, at = 0; i < count; i += 1, at += 3) {
    if (only && !only.has(i)) {
      vouched += 1;
      continue;
    }
    const rel = (paths ??= record.paths)[i] as string;
    const size = numbers[at];
    let same = false;
    if (size !== UNSETTLED) {
      const abs = rel.charCodeAt(0) === 47 /* / */ ? rel : rel.includes('..') ? path.resolve(root, rel) : prefix + rel;
      let st: Stats | undefined;
      try {
        st = statSync(abs, STAT_OPTIONS);
      } catch {
        st = undefined;
      }
      same = st === undefined ? size === MISSING : st.size === size && st.mtimeMs === numbers[at + 1] && st.ino === numbers[at + 2];
    }
    if (!same) (changed ??= new Uint8Array(count))[i] = 1;
  }
  const changedDirs: string[] = [];
  for (let i = 0; i < dirs.length; i += 2)
    if (dirStat(path.resolve(root, dirs[i] as string)) !== dirs[i + 1]) changedDirs.push(dirs[i] as string);
  const skipped = new Map(Object.entries(record.skipped));
  const checked = { files: count, vouched };
  if (!changed && changedDirs.length === 0) return { unchanged: { pipeline: record.pipeline, stages: record.stages, skipped }, checked };
  const files: string[] = [];
  paths ??= record.paths;
  if (changed) for (let i = 0; i < count; i += 1) if (changed[i] === 1) files.push(paths[i] as string);
  const previous = new PreviousRecord(record, changed ?? new Uint8Array(count));
  return { changed: { files, dirs: changedDirs, previous, skipped, stages: record.stages }, checked };
}
