import type { StageInstance } from '../types/plan.ts';
import type { CachedOutcome } from '../remote-cache/stage-cache.ts';
import type { RunStageInput, StageRunContext } from './stage-runner.ts';

/** How a stage ended on another machine: `worker` names the one that ran it. */
export type RemoteOutcome = CachedOutcome & { worker?: string };

/**
 * The run's remote slots (`refinery run --workers`): the executor hands them the ready stages
 * that may run elsewhere, in place of a local slot. How a stage gets there and back is theirs;
 * the stage itself runs through the same `runStage` on the worker.
 */
export interface RemoteSlots {
  /** Why this stage must run here; undefined when a worker may run it. */
  keepsLocal(input: RunStageInput): string | undefined;
  /** Local slots filled before stages go to workers (`-j N` with `--workers`); 0: every stage that may go, goes. */
  readonly localSlots: number;
  run(input: RunStageInput, ctx: StageRunContext, deps: readonly StageInstance[]): Promise<RemoteOutcome>;
}
