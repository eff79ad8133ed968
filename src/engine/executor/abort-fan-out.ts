import { setMaxListeners } from 'node:events';

/** A short-lived signal that follows a long-lived one, and its release once its work is over. */
export interface ChildSignal {
  signal: AbortSignal;
  /** Aborts this signal alone (a stage's or a judge's timeout), with `reason`. */
  abort(reason: unknown): void;
  /** The work is over: the parent's abort no longer reaches this signal. */
  release(): void;
}

/**
 * One abort listener on a long-lived signal (a run's, a consensus round's), however many pieces
 * of work follow it at once: each gets a signal of its own, aborted with the parent's reason.
 * Node warns of a possible leak at the 11th listener on one signal, so a run at -j 16 (a
 * listener per running command on the run's signal, each removed in time) printed that warning
 * to the user's terminal.
 *
 * A child's own signal has no listener limit: it lives as long as its piece of work, so a
 * listener left on it goes with it, and the work may rightly hang many on it (a task's
 * concurrent model calls).
 */
export class AbortFanOut {
  private readonly children = new Set<AbortController>();
  private readonly onAbort = (): void => {
    for (const child of this.children) child.abort(this.parent.reason);
    this.children.clear();
  };

  /**
   * Listens from the first child on, so a fan-out never used leaves nothing on the parent (an
   * EventTarget keeps one registration of a listener, however often it is added).
   */
  constructor(private readonly parent: AbortSignal) {}

  child(): ChildSignal {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    if (this.parent.aborted) controller.abort(this.parent.reason);
    else {
      this.children.add(controller);
      this.parent.addEventListener('abort', this.onAbort, { once: true });
    }
    return {
      signal: controller.signal,
      abort: (reason) => {
        this.children.delete(controller);
        controller.abort(reason);
      },
      release: () => {
        this.children.delete(controller);
      },
    };
  }

  /** Stops following the parent: its listener is removed. */
  close(): void {
    this.parent.removeEventListener('abort', this.onAbort);
    this.children.clear();
  }
}
