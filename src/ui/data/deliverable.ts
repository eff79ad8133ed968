// The deliverable a refine round scored, for the session page to show beside the scores: the files
// consensus.json lists, read from the project now (each path checked to stay inside it), with whether a
// file changed since the round scored it. Text only, capped; the page escapes or sanitizes it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolveInProject } from '../safe-path.ts';
import { isObject } from './jsonl.ts';

/** Per file shown; a larger file is shown up to this and said to be cut. */
const SHOWN_BYTES = 256 * 1024;
/** Above this a file is not read to check whether it changed. */
const HASHED_BYTES = 8 * 1024 * 1024;

export interface ShownFile {
  path: string;
  bytes: number;
  /** The file's text (null: binary, missing, or outside the project). */
  text: string | null;
  truncated: boolean;
  /** missing: no longer in the project; changed: its content is not what the round scored; unknown: too large to check. */
  state: 'as-scored' | 'changed' | 'missing' | 'binary' | 'unknown';
}

export interface ShownDeliverable {
  round: number;
  files: ShownFile[];
}

async function showFile(root: string, path: string, sha256: string): Promise<ShownFile> {
  const found = resolveInProject(root, path, { kind: 'file' });
  if (!found) return { path, bytes: 0, text: null, truncated: false, state: 'missing' };
  if (found.size > HASHED_BYTES) return { path, bytes: found.size, text: null, truncated: true, state: 'unknown' };
  const buffer = await readFile(found.abs);
  if (buffer.subarray(0, 8192).includes(0)) return { path, bytes: buffer.length, text: null, truncated: false, state: 'binary' };
  const same = createHash('sha256').update(buffer).digest('hex') === sha256;
  return {
    path,
    bytes: buffer.length,
    text: buffer.subarray(0, SHOWN_BYTES).toString('utf8'),
    truncated: buffer.length > SHOWN_BYTES,
    state: same ? 'as-scored' : 'changed',
  };
}

/** The deliverable of the newest round whose consensus.json lists one; null when none does. */
export async function scoredDeliverable(
  root: string,
  rounds: ReadonlyArray<{ round: number; consensus: unknown }>,
): Promise<ShownDeliverable | null> {
  for (const r of [...rounds].reverse()) {
    const listed = isObject(r.consensus) && Array.isArray(r.consensus.deliverable) ? r.consensus.deliverable : null;
    if (!listed) continue;
    const files: ShownFile[] = [];
    for (const entry of listed)
      if (isObject(entry) && typeof entry.path === 'string' && typeof entry.sha256 === 'string')
        files.push(await showFile(root, entry.path, entry.sha256));
    return { round: r.round, files };
  }
  return null;
}
