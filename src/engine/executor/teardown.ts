import { existsSync, rmSync } from 'node:fs';
import type { FileHashes } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { RunnerPool } from '../shell/runner-pool.ts';
import { stagingDir } from './staging.ts';

export interface RunResources {
  root: string;
  runId: string;
  hashes: FileHashes;
  state: StageState;
  runners?: RunnerPool | undefined;
}

/**
 * Ends a run: stops its command runners, saves the stat cache, compacts and closes the stage
 * journal, and removes its staging folder. Returns the state files that could not be written
 * (a full disk): the run then counts as failed.
 */
export function tearDown(run: RunResources): WriteProblem[] {
  run.runners?.close();
  const problems = [run.hashes.save(), run.state.compact()].filter((p): p is WriteProblem => p !== undefined);
  run.state.close();
  const dir = stagingDir(run.root, run.runId);
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  return problems;
}
