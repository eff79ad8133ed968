// The files a task found only while it ran (TaskResult.reads), kept beside the stage's
// fingerprint as a make depfile is: hashed once the stage has run, compared before it is taken as
// up to date. A stage cannot list them as inputs, because it learns them by running.
import path from 'node:path';
import type { FileHashes } from '../state/file-hashes.ts';
import type { Observations } from '../state/observations.ts';

const MISSING = 'missing';

/** A path as the hash cache keys it: relative to the root (with /) when inside it, else absolute. */
export function readKey(root: string, file: string): string {
  const abs = path.resolve(root, file);
  const rel = path.relative(root, abs);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel.split(path.sep).join('/');
}

function hashNow(key: string, hashes: FileHashes, observations?: Observations): string {
  let stamp: ReturnType<FileHashes['stamp']>;
  try {
    stamp = hashes.stamp(key);
  } catch {
    // Unreadable now: not what was read, so the stage runs and says so itself.
    return 'unreadable';
  }
  observations?.file(key, stamp);
  return stamp?.[3] ?? MISSING;
}

/** Each file the task read, with its content hash now ('missing' where there is none). */
export function hashReads(root: string, reads: readonly string[], hashes: FileHashes, observations?: Observations): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...new Set(reads.map((r) => readKey(root, r)))].sort()) out[key] = hashNow(key, hashes, observations);
  return out;
}

/** The files a stage's last run read that changed since, appeared or went away (sorted). */
export function changedReads(recorded: Readonly<Record<string, string>>, hashes: FileHashes, observations?: Observations): string[] {
  return Object.keys(recorded)
    .filter((key) => hashNow(key, hashes, observations) !== recorded[key])
    .sort();
}
