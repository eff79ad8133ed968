import {
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { ResolvedOutput } from '../types/plan.ts';
import type { ArtifactIssue } from '../types/events.ts';
import type { SchemaRegistry } from './schema-registry.ts';
import { digest, hashOpenFile } from '../state/hash-file.ts';
import { makeOutputFolder } from '../paths/inside-project.ts';
import { redactSecretsDeep } from '../../security/known-secrets.ts';

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
export function checkStagedOutputs(
  outputs: readonly StagedOutput[],
  schemas: SchemaRegistry,
): { issues: ArtifactIssue[]; files: Map<string, StagedFile> } {
  const issues: ArtifactIssue[] = [];
  const files = new Map<string, StagedFile>();
  for (const o of outputs) {
    const read = readStaged(o.staging, Boolean(o.target.schema));
    if (!read.ok) {
      const message = read.missing
        ? `was not written; the stage must write it to its staging path (\${outputs.${o.name}} or ctx.outputs.${o.name})`
        : `could not be read back from its staging path: ${read.reason}`;
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
      for (const issue of result.issues)
        issues.push({
          output: o.name,
          path: o.target.path,
          pointer: issue.pointer,
          message: `${issue.message} (schema ${o.target.schema})`,
        });
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
  // The issues quote the artifact's values: cleaned of secrets like every event that carries them.
  writeFileSync(path.join(rejectedDir, 'errors.json'), `${JSON.stringify(redactSecretsDeep(issues), null, 2)}\n`);
  return rejectedDir;
}

/** Removes whatever a failed attempt left at its staging paths. */
export function discardStaged(outputs: readonly StagedOutput[]): void {
  for (const o of outputs) rmSync(o.staging, { force: true, recursive: true });
}

/** Creates directories once per process; a run stages thousands of files into one folder. */
const madeDirs = new Set<string>();

export function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}

function renameProblem(error: unknown, rel: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EISDIR':
    case 'ENOTEMPTY':
    case 'EEXIST':
      return `cannot be published: ${rel} is a folder; remove it or give the output another path`;
    case 'ENOTDIR':
      return `cannot be published: a file is in the way of its folder; remove it or give the output another path`;
    case 'EXDEV':
      return `cannot be published: ${rel} is on another file system than .refinery/staging`;
    default:
      return `cannot be published: ${code ?? (error as Error).message}`;
  }
}

interface Placed {
  output: StagedOutput;
  target: string;
  /** A hard link to the file the output replaces, to put back if a later output fails. */
  backup?: string;
}

/** Keeps the file at `target` reachable under `backup` (a hard link where it can); false when there is none to keep. */
function keepOld(target: string, backup: string): boolean {
  let st;
  try {
    st = lstatSync(target);
  } catch {
    return false;
  }
  if (st.isDirectory()) return false;
  rmSync(backup, { force: true });
  try {
    linkSync(target, backup);
  } catch {
    // A file system without hard links: a copy serves as well.
    copyFileSync(target, backup);
  }
  return true;
}

/** Undoes the renames already made: each new file goes back to staging, each old one to its place. */
function rollBack(done: readonly Placed[]): string | undefined {
  try {
    for (const p of [...done].reverse()) {
      renameSync(p.target, p.output.staging);
      if (p.backup) renameSync(p.backup, p.target);
    }
    return undefined;
  } catch (error) {
    return `; putting back the outputs already renamed failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

function issueOf(o: StagedOutput, message: string): ArtifactIssue {
  return { output: o.name, path: o.target.path, pointer: '', message };
}

/**
 * Renames every staged output over its target, all or none. Readers see each file old or
 * new, never half. Every folder is checked first (made where missing, refused where it leads
 * outside the project through a symlink). With several outputs, each replaced file is kept
 * by a hard link until all are in place, so a rename that fails puts the earlier ones back.
 * Returns the problems; when there are any, nothing was published and the staged files are
 * still at their staging paths.
 */
export function publishOutputs(root: string, outputs: readonly StagedOutput[]): ArtifactIssue[] {
  const issues: ArtifactIssue[] = [];
  for (const o of outputs) {
    const problem = makeOutputFolder(root, o.target.path);
    if (problem) issues.push(issueOf(o, problem));
  }
  if (issues.length > 0) return issues;
  const several = outputs.length > 1;
  const placed: Placed[] = [];
  try {
    for (const o of outputs) {
      const target = path.join(root, o.target.path);
      const backup = `${o.staging}.old`;
      try {
        placed.push({ output: o, target, ...(several && keepOld(target, backup) ? { backup } : {}) });
      } catch (error) {
        return [
          issueOf(
            o,
            `cannot be published: the file it replaces cannot be kept aside (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
          ),
        ];
      }
    }
    for (const [i, p] of placed.entries()) {
      try {
        renameSync(p.output.staging, p.target);
      } catch (error) {
        return [issueOf(p.output, `${renameProblem(error, p.output.target.path)}${rollBack(placed.slice(0, i)) ?? ''}`)];
      }
    }
    return [];
  } finally {
    for (const p of placed) if (p.backup) rmSync(p.backup, { force: true });
  }
}
