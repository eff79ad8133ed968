import type { StageOutcomeCode } from '../types/events.ts';
import { describeFsError, isFsError } from '../state/write-problem.ts';
import { WorkQueue } from './work-queue.ts';

/**
 * Stage slots: the run's `-j` slots, with each named pool (`pools: { llm: 4 }`) a queue in
 * front of them, so a pool's stages never hold more than its size of the run's slots.
 */
export class Dispatcher {
  private readonly slots: WorkQueue;
  private readonly pools = new Map<string, WorkQueue>();

  constructor(concurrency: number, pools: Readonly<Record<string, number>>) {
    this.slots = new WorkQueue(Math.max(1, concurrency));
    for (const [name, size] of Object.entries(pools)) this.pools.set(name, new WorkQueue(size));
  }

  /** Runs `job` once its pool (if it names one) and then the run have a free slot. */
  dispatch(pool: string | undefined, job: () => Promise<void>): Promise<void> {
    const named = pool === undefined ? undefined : this.pools.get(pool);
    return named ? named.run(() => this.slots.run(job)) : this.slots.run(job);
  }
}

/** A job that threw: a file-system failure (a full disk) is the machine's, one line; anything else is a bug, with its stack. */
export function dispatchFailure(error: unknown, root: string): { code: StageOutcomeCode; reason: string } {
  if (isFsError(error)) return { code: 'file-system-error', reason: describeFsError(error, root) };
  return { code: 'internal-error', reason: `internal error: ${(error as Error).stack ?? String(error)}` };
}
