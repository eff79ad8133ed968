import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import { digest } from '../state/hash-file.ts';
import type { FingerprintParts } from '../state/stage-state.ts';
import { expandGlob, FolderListings } from '../paths/walk.ts';
import { isGlob } from '../paths/glob.ts';
import type { Observations } from '../state/observations.ts';

/** JSON with object keys sorted, so hashes do not depend on the order users wrote. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export interface ResolvedInputs {
  files: string[];
  /** Non-glob inputs that do not exist. */
  missing: string[];
}

/** Input files of an instance: globs expanded, directories walked, its own outputs left out. */
export function resolveInputs(root: string, inst: StageInstance, hashes: FileHashes, observations?: Observations): ResolvedInputs {
  // Listed once for all its patterns: they often walk the same folders.
  const onDir = new FolderListings(root, observations ? (dir, mtime) => observations.dir(dir, mtime) : undefined);
  const own = new Set(Object.values(inst.outputs).map((o) => o.path));
  const files = new Set<string>();
  const missing: string[] = [];
  for (const pattern of inst.inputs) {
    if (isGlob(pattern)) {
      for (const f of expandGlob(root, pattern, 'file', onDir)) files.add(f);
      continue;
    }
    // A regular file is the common case, and its stamp is needed anyway.
    if (hashes.stamp(pattern)) {
      files.add(pattern);
      continue;
    }
    let isDir = false;
    try {
      isDir = statSync(path.resolve(root, pattern)).isDirectory();
    } catch {
      missing.push(pattern);
      continue;
    }
    if (isDir) for (const f of expandGlob(root, `${pattern}/**`, 'file', onDir)) files.add(f);
    else files.add(pattern);
  }
  const result = own.size ? [...files].filter((f) => !own.has(f)) : [...files];
  result.sort();
  if (observations) for (const f of [...result, ...missing]) observations.file(f, hashes.stamp(f));
  return { files: result, missing };
}

export interface FingerprintInput {
  codeHash: string;
  paramsJson: string;
  inputFiles: readonly string[];
  /** Each stage it `needs:` -> what that stage wrote (outputsDigest), or 'skipped'. */
  needed: Readonly<Record<string, string>>;
  schemaHashes: Readonly<Record<string, string>>;
  /** The project root: params that name it mark the result as local (never shared). */
  root?: string;
}

export function fingerprintParts(input: FingerprintInput, hashes: FileHashes): FingerprintParts {
  const inputs: Record<string, string> = {};
  for (const f of input.inputFiles) inputs[f] = hashes.hash(f) ?? 'missing';
  const parts: FingerprintParts = {
    code: input.codeHash,
    params: digest(input.paramsJson),
    inputs,
    deps: { ...input.needed },
    schemas: { ...input.schemaHashes },
  };
  if (input.root !== undefined && namesFolder(input.paramsJson, input.root))
    parts.local =
      'its params, command or env name the project folder by its absolute path; give paths relative to the project to share its result';
  return parts;
}

/**
 * Whether `text` holds `folder` as a path (followed by a separator, a quote or its end). A result
 * made from such params may hold that path too, so it is not handed to a clone in another folder.
 */
export function namesFolder(text: string, folder: string): boolean {
  if (folder === '/' || folder === '') return false;
  const escaped = folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${escaped}(?=[/"'\\s]|$)`).test(text);
}

/**
 * sha256 over the parts, fed in a fixed order (sorted keys) without building one big string.
 * Portable: the same on every machine and in every folder the project is cloned to. Inputs
 * inside the project enter by their path relative to it; an absolute input (outside the
 * project, whose place differs between machines) by its content alone.
 */
export function fingerprintOf(parts: FingerprintParts): string {
  const h = createHash('sha256');
  h.update(`code\0${parts.code}\0params\0${parts.params}\0`);
  const outside: string[] = [];
  for (const k of Object.keys(parts.inputs).sort()) {
    if (path.isAbsolute(k)) outside.push(parts.inputs[k] as string);
    else h.update(`i\0${k}\0${parts.inputs[k]}\0`);
  }
  for (const content of outside.sort()) h.update(`x\0${content}\0`);
  for (const k of Object.keys(parts.deps).sort()) h.update(`d\0${k}\0${parts.deps[k]}\0`);
  for (const k of Object.keys(parts.schemas).sort()) h.update(`s\0${k}\0${parts.schemas[k]}\0`);
  return h.digest('base64url');
}
