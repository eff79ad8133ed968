import { statSync } from 'node:fs';
import path from 'node:path';
import type { StagedFile, StagedOutput } from '../artifacts/commit.ts';
import { contentStamp, type FileHashes } from '../state/file-hashes.ts';
import type { Observations } from '../state/observations.ts';
import type { StageRecord } from '../state/stage-state.ts';

/**
 * What a stage's outputs are once published (run here, or fetched from a remote cache): each
 * one's stamp, known to the hash cache without reading it again, and recorded as written by
 * this run, with its folder's new mtime when the run lists that folder.
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
    const dir = path.posix.dirname(o.target.path);
    if (ctx.observations?.dirs.has(dir)) ctx.observations.dirRewritten(dir, dirMtime(path.join(ctx.root, dir)));
  }
  return outputs;
}

function dirMtime(abs: string): number | null {
  try {
    return statSync(abs, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}
