import path from 'node:path';
import type { StageInstance } from '../model/plan.ts';
import { ensureDir, type StagedOutput } from '../artifacts/commit.ts';
import { fileKey } from '../paths/file-key.ts';

function stagingRoot(root: string): string {
  return path.join(root, '.refinery', 'staging');
}

/** One folder per run for its staged outputs and command scripts. */
export function stagingDir(root: string, runId: string): string {
  return path.join(stagingRoot(root), runId);
}

/** Flat staging files in one folder per run: no directory to make or remove per stage. */
export function stagingPaths(root: string, runId: string, inst: StageInstance): StagedOutput[] {
  const dir = stagingDir(root, runId);
  ensureDir(dir);
  const key = fileKey(inst.id);
  return Object.entries(inst.outputs).map(([name, target]) => ({
    name,
    target,
    staging: path.join(dir, `${key}.${name}.${path.basename(target.path).slice(-80)}`),
  }));
}

/** Where a `run:` stage's script is written for the runner that starts it. */
export function scriptPath(root: string, runId: string, inst: StageInstance): string {
  return path.join(stagingDir(root, runId), `${fileKey(inst.id)}.sh`);
}
