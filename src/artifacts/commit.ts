import { closeSync, cpSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedOutput } from '../model/plan.ts';
import type { ArtifactIssue } from '../model/events.ts';
import type { SchemaRegistry } from './schema-registry.ts';
import { digest, hashOpenFile } from '../state/hash-file.ts';

export interface StagedOutput {
  name: string;
  staging: string;
  target: ResolvedOutput;
}

/**
 * A staged file as read once: its stat and hash, and its content when a schema must check it.
 * Outputs without a schema are hashed in bounded memory, whatever their size.
 */
export interface StagedFile {
  size: number;
  mtimeMs: number;
  ino: number;
  hash: string;
  data?: Buffer;
}

type StagedRead = { ok: true; file: StagedFile } | { ok: false; missing: boolean; reason: string };

function readStaged(file: string, keepData: boolean): StagedRead {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, missing: true, reason: 'not a regular file' };
    const stat = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
    if (!keepData) return { ok: true, file: { ...stat, hash: hashOpenFile(fd, st.size) } };
    const data = readFileSync(fd);
    return { ok: true, file: { ...stat, hash: digest(data), data } };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, missing: code === 'ENOENT' || code === 'ENOTDIR', reason: (error as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Checks that every output was written and that each with a schema is valid. Each staged file
 * is read once; what was read is returned by output name (a rename keeps size, mtime and inode).
 */
export function checkStagedOutputs(outputs: readonly StagedOutput[], schemas: SchemaRegistry): { issues: ArtifactIssue[]; files: Map<string, StagedFile> } {
  const issues: ArtifactIssue[] = [];
  const files = new Map<string, StagedFile>();
  for (const o of outputs) {
    const read = readStaged(o.staging, Boolean(o.target.schema));
    if (!read.ok) {
      const message = read.missing ? `was not written; the stage must write it to its staging path (\${outputs.${o.name}} or ctx.outputs.${o.name})` : `could not be read back from its staging path: ${read.reason}`;
      issues.push({ output: o.name, path: o.target.path, pointer: '', message });
      continue;
    }
    const file = read.file;
    files.set(o.name, file);
    if (!o.target.schema || !file.data) continue;
    let data: unknown;
    try {
      data = JSON.parse(file.data.toString('utf8'));
    } catch (error) {
      issues.push({ output: o.name, path: o.target.path, pointer: '', message: `is not valid JSON: ${(error as Error).message}` });
      continue;
    }
    const result = schemas.validate(o.target.schema, data);
    if (!result.ok) {
      for (const issue of result.issues) issues.push({ output: o.name, path: o.target.path, pointer: issue.pointer, message: `${issue.message} (schema ${o.target.schema})` });
    }
  }
  return { issues, files };
}

/** Moves a stage's staged files aside with the validation errors beside them; returns the folder. */
export function rejectOutputs(outputs: readonly StagedOutput[], rejectedDir: string, issues: readonly ArtifactIssue[]): string {
  rmSync(rejectedDir, { recursive: true, force: true });
  mkdirSync(rejectedDir, { recursive: true });
  for (const o of outputs) {
    if (!existsSync(o.staging)) continue;
    const dest = path.join(rejectedDir, o.name, path.basename(o.target.path));
    mkdirSync(path.dirname(dest), { recursive: true });
    try {
      renameSync(o.staging, dest);
    } catch {
      cpSync(o.staging, dest);
    }
  }
  writeFileSync(path.join(rejectedDir, 'errors.json'), `${JSON.stringify(issues, null, 2)}\n`);
  return rejectedDir;
}

/** Removes whatever a failed attempt left at its staging paths. */
export function discardStaged(outputs: readonly StagedOutput[]): void {
  for (const o of outputs) rmSync(o.staging, { force: true, recursive: true });
}

/** Creates directories once per process; a run publishes thousands of files into few folders. */
const madeDirs = new Set<string>();

export function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}

/** Renames each staged output over its target: readers see the old file or the new one, never half. */
export function publishOutputs(root: string, outputs: readonly StagedOutput[]): void {
  for (const o of outputs) {
    const target = path.join(root, o.target.path);
    try {
      renameSync(o.staging, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The target's folder is new (or was removed since this process made it).
      madeDirs.delete(path.dirname(target));
      ensureDir(path.dirname(target));
      renameSync(o.staging, target);
    }
  }
}
