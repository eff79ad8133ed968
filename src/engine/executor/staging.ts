import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import { ensureDir, type StagedOutput } from '../artifacts/commit.ts';
import { runIdPid } from '../events/bus.ts';
import { fileKey } from '../paths/file-key.ts';
import { pidExists as processAlive } from '../state/process-identity.ts';

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

/**
 * Removes the staging folders of runs that are over (a killed run leaves its folder behind).
 * Called while holding the project lock, so no other run or watch is active; a folder whose
 * run id names a live process other than this one belongs to `refinery task` (which runs
 * without the lock) and is kept.
 */
export function removeLeftoverStaging(root: string): void {
  let names: string[];
  try {
    names = readdirSync(stagingRoot(root));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = runIdPid(name);
    if (pid !== undefined && pid !== process.pid && processAlive(pid)) continue;
    rmSync(path.join(stagingRoot(root), name), { recursive: true, force: true });
  }
}
