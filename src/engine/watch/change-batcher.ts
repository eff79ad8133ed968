import type { FileChange } from './types.ts';

/**
 * Debounces file changes: a batch is handed over once the file system has been quiet for
 * `debounceMs` (a burst such as a checkout becomes one batch), or at the latest `maxWaitMs`
 * after its first change (a file written to without pause still gets processed). Repeats
 * are kept once.
 *
 * The quiet time is counted from the file system's own notification (`activity()`), not from
 * the change the watcher reports once it has lstat'ed the entry; changes
 * still arriving keep the batch open for `graceMs` more.
 *
 * Node runs expired timers before it reads the I/O that queued up meanwhile, so after this
 * process stalled (a loaded machine), the quiet timer would fire ahead of notifications the
 * kernel already holds and split one burst into two batches. The timer therefore only asks for
 * a check after the next I/O poll (setImmediate), and the batch goes once that check still
 * finds the quiet time elapsed.
 */
export class ChangeBatcher {
  private batch = new Map<string, FileChange>();
  private quiet: NodeJS.Timeout | undefined;
  private confirm: NodeJS.Immediate | undefined;
  /** When the quiet time ends, unless more activity comes. */
  private due = 0;
  private deadline: NodeJS.Timeout | undefined;
  private lastActivity = -Infinity;
  private lastChange = -Infinity;
  private readonly graceMs: number;

  constructor(
    private readonly debounceMs: number,
    private readonly maxWaitMs: number,
    private readonly flush: (changes: FileChange[]) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.graceMs = Math.min(debounceMs, 10);
  }

  /** A raw notification: something under a watched folder changed. */
  activity(): void {
    this.lastActivity = this.now();
    if (this.batch.size > 0) this.schedule();
  }

  push(change: FileChange): void {
    this.batch.set(`${change.kind}\0${change.path}`, change);
    this.lastChange = this.now();
    this.schedule();
    this.deadline ??= setTimeout(() => this.fire(), this.maxWaitMs);
  }

  private schedule(): void {
    // A notification more than a debounce before the change is not the one that caused it.
    const anchor = this.lastChange - this.lastActivity <= this.debounceMs ? this.lastActivity : this.lastChange;
    this.due = Math.max(anchor + this.debounceMs, this.lastChange + this.graceMs);
    this.armQuiet();
  }

  private armQuiet(): void {
    clearTimeout(this.quiet);
    this.quiet = setTimeout(() => this.confirmQuiet(), Math.max(0, this.due - this.now()));
  }

  private confirmQuiet(): void {
    clearImmediate(this.confirm);
    this.confirm = setImmediate(() => {
      this.confirm = undefined;
      // Activity read by the poll just before moved `due` on (timers may also fire a little early).
      if (this.now() >= this.due) this.fire();
      else this.armQuiet();
    });
  }

  private fire(): void {
    this.cancel();
    const changes = [...this.batch.values()];
    this.batch = new Map();
    if (changes.length > 0) this.flush(changes);
  }

  /** Drops the timers (the batch stays, unflushed). */
  cancel(): void {
    clearTimeout(this.quiet);
    clearImmediate(this.confirm);
    clearTimeout(this.deadline);
    this.quiet = undefined;
    this.confirm = undefined;
    this.deadline = undefined;
  }
}
