import PQueue from 'p-queue';

/**
 * At most `concurrency` jobs at once, first come first served: the stage slots of a run, its
 * named pools, and each model backend's call limit. The one module that imports p-queue.
 */
export class WorkQueue {
  private readonly queue: PQueue;

  constructor(readonly concurrency: number) {
    this.queue = new PQueue({ concurrency });
  }

  /** Jobs started and not finished. */
  get inFlight(): number {
    return this.queue.pending;
  }

  /**
   * Runs `job` when a slot is free. An abort while it waits rejects with the signal's reason
   * and frees its place; once started, the job holds its slot until it ends (it is told of the
   * abort through its own means).
   */
  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (!signal) return this.queue.add(job);
    const waiting = new AbortController();
    const onAbort = (): void => waiting.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return this.queue.add(
      () => {
        signal.removeEventListener('abort', onAbort);
        return job();
      },
      { signal: waiting.signal },
    );
  }
}
