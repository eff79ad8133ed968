import { statSync } from 'node:fs';
import path from 'node:path';
import type { StagedFile, StagedOutput } from '../artifacts/commit.ts';
import { contentStamp, type FileHashes } from '../state/file-hashes.ts';
import type { Observations } from '../state/observations.ts';
import type { StageRecord } from '../state/stage-state.ts';

/**
 * What a stage's outputs are once published (run here, or fetched from a remote cache): each
 * one's stamp, known to the hash cache without reading it again, and recorded as written by
 * this run, with its folders' new mtimes when the run lists those folders.
 */
export function recordPublished(
  ctx: { root: string; hashes: FileHashes; observations?: Observations | undefined },
  staged: readonly StagedOutput[],
  files: ReadonlyMap<string, StagedFile>,
): StageRecord['outputs'] {
  const outputs: StageRecord['outputs'] = {};
  for (const o of staged) {
    const stamp = contentStamp(files.get(o.name) as StagedFile);
    ctx.hashes.remember(o.target.path, stamp);
    outputs[o.name] = stamp;
    ctx.observations?.file(o.target.path, stamp, true);
    if (ctx.observations) publishedInto(ctx.root, path.posix.dirname(o.target.path), ctx.observations);
  }
  return outputs;
}

/**
 * The folders an output was published into, its own and those above it that publishing may have
 * made: their mtime is this run's doing, as the output's stat is, whether a walk lists them
 * before the publish (their new mtime is taken) or after it (a cell's folder a later glob reads).
 */
function publishedInto(root: string, folder: string, observations: Observations): void {
  for (let dir = folder; dir !== '.' && dir !== '/' && dir !== ''; dir = path.posix.dirname(dir)) {
    if (observations.dirs.has(dir)) observations.dirRewritten(dir, dirMtime(path.join(root, dir)));
    else observations.written.add(dir);
  }
}

function dirMtime(abs: string): number | null {
  try {
    return statSync(abs, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}
