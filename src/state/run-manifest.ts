import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Observations } from './observations.ts';

/**
 * The no-op check. After a run in which every stage ended up to date, refinery records the
 * stat (size, mtime, inode) of every file and folder that run looked at. The next run with the
 * same pipeline text and params first compares those stats; when none changed, every stage is
 * still up to date and nothing needs loading, expanding or hashing — the way make and ninja
 * decide a no-op from stats alone. Any difference falls back to the full fingerprint check.
 */
interface Manifest {
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
function manifestFile(root: string, pipelineFile: string): string {
  const id = createHash('sha256').update(path.resolve(pipelineFile)).digest('hex').slice(0, 16);
  return path.join(root, '.refinery', 'state', `noop-${id}.json`);
}

export function manifestKey(parts: { version: string; pipelineFile: string; pipelineText: string; params: Readonly<Record<string, string>> }): string {
  const params = Object.entries(parts.params).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify([parts.version, parts.pipelineFile, parts.pipelineText, params])).digest('hex');
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
  rmSync(manifestFile(root, pipelineFile), { force: true });
}

export function writeManifest(
  root: string,
  pipelineFile: string,
  pipeline: string,
  key: string,
  stages: readonly string[],
  seen: Observations,
  skipped: ReadonlyMap<string, string> = new Map(),
): void {
  // The stats recorded when each thing was read, never fresh ones: see Observations.
  const files: Manifest['files'] = Object.fromEntries([...seen.files].sort(([a], [b]) => (a < b ? -1 : 1)));
  const dirs: Manifest['dirs'] = Object.fromEntries([...seen.dirs].sort(([a], [b]) => (a < b ? -1 : 1)));
  const manifest: Manifest = { key, pipeline, stages: [...stages], skipped: Object.fromEntries(skipped), files, dirs, probes: Object.fromEntries([...seen.probes].sort()) };
  const file = manifestFile(root, pipelineFile);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, file);
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
export function compareWithLastRun(root: string, pipelineFile: string, key: string): LastRunComparison | undefined {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile(root, pipelineFile), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (manifest.key !== key) return undefined;
  for (const [d, mtime] of Object.entries(manifest.dirs)) if (dirStat(path.resolve(root, d)) !== mtime) return undefined;
  for (const [p, answer] of Object.entries(manifest.probes)) if (existsSync(path.resolve(root, p)) !== answer) return undefined;
  const files: string[] = [];
  const previous = new Observations();
  for (const [f, stamp] of Object.entries(manifest.files)) {
    const now = fileStat(path.resolve(root, f));
    const same = now === null || stamp === null ? now === stamp : now[0] === stamp[0] && now[1] === stamp[1] && now[2] === stamp[2];
    if (same) previous.files.set(f, stamp);
    else files.push(f);
  }
  const skipped = new Map(Object.entries(manifest.skipped ?? {}));
  if (files.length === 0) return { unchanged: { pipeline: manifest.pipeline, stages: manifest.stages, skipped } };
  for (const [d, mtime] of Object.entries(manifest.dirs)) previous.dirs.set(d, mtime);
  for (const [p, answer] of Object.entries(manifest.probes)) previous.probes.set(p, answer);
  return { changed: { files, previous, skipped } };
}
