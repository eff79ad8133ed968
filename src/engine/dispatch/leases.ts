// Which dispatched jobs are still in good hands, over plain data and a clock passed in. A job is
// untaken until a worker says it took it, and sent again every `resendMs` meanwhile: the broker
// may have queued it for a worker that is gone (a shared subscription keeps handing messages to a
// dead member's session until it expires), or lost it in a restart. A taken job lives while some
// worker holding it says so within the lease; one whose lease lapses (its worker died) is
// dispatched again. A job nobody takes within `takeMs` fails the run with that reason. Pure: the
// coordinator does the sending.

export interface LeaseSettings {
  /** A taken job with no word from a worker for this long is dispatched again. */
  leaseMs: number;
  /** A job no worker took for this long fails the run: nobody is there to take it. */
  takeMs: number;
  /** An untaken job is sent again this often. */
  resendMs: number;
}

interface Entry {
  attempt: number;
  /** When the current attempt was first sent (or the clock resumed): the wait for a taker counts from here. */
  sentAt: number;
  /** When it was last sent. */
  lastSentAt: number;
  /** Workers that took it; the last word heard from any of them. */
  takers: Set<string>;
  heardAt: number;
}

export type Due =
  | { job: string; kind: 'untaken'; waitedMs: number }
  | { job: string; kind: 'resend' }
  | { job: string; kind: 'lapsed'; workers: string[]; silentMs: number };

export class Leases {
  private readonly entries = new Map<string, Entry>();

  constructor(readonly settings: LeaseSettings) {}

  get size(): number {
    return this.entries.size;
  }

  has(job: string): boolean {
    return this.entries.has(job);
  }

  attempt(job: string): number | undefined {
    return this.entries.get(job)?.attempt;
  }

  /** A job sent (again): a new attempt, untaken. Returns its attempt number. */
  send(job: string, now: number): number {
    const previous = this.entries.get(job);
    const attempt = (previous?.attempt ?? 0) + 1;
    this.entries.set(job, { attempt, sentAt: now, lastSentAt: now, takers: new Set(), heardAt: now });
    return attempt;
  }

  /** A worker took the job (any attempt of it: an earlier one still running is as good). */
  took(job: string, worker: string, now: number): void {
    const entry = this.entries.get(job);
    if (!entry) return;
    entry.takers.add(worker);
    entry.heardAt = now;
  }

  /** A worker says it still holds these jobs. */
  beat(worker: string, jobs: readonly string[], now: number): void {
    for (const job of jobs) {
      const entry = this.entries.get(job);
      if (!entry) continue;
      entry.takers.add(worker);
      entry.heardAt = now;
    }
  }

  /** The worker gave the job back (it is stopping): it holds it no more. */
  handedBack(job: string, worker: string): void {
    this.entries.get(job)?.takers.delete(worker);
  }

  takers(job: string): string[] {
    return [...(this.entries.get(job)?.takers ?? [])];
  }

  /** The job has its result: no more waiting for it. */
  settle(job: string): void {
    this.entries.delete(job);
  }

  /**
   * Every clock starts again from `now`: while the coordinator could not hear the broker (it
   * restarted, the network dropped), silence says nothing about the workers.
   */
  resume(now: number): void {
    for (const entry of this.entries.values()) {
      entry.sentAt = now;
      entry.lastSentAt = now;
      entry.heardAt = now;
    }
  }

  /** Jobs whose time is up, as of `now`. */
  due(now: number): Due[] {
    const out: Due[] = [];
    for (const [job, entry] of this.entries) {
      if (entry.takers.size === 0) {
        if (now - entry.sentAt >= this.settings.takeMs) out.push({ job, kind: 'untaken', waitedMs: now - entry.sentAt });
        else if (now - entry.lastSentAt >= this.settings.resendMs) {
          entry.lastSentAt = now;
          out.push({ job, kind: 'resend' });
        }
      } else if (now - entry.heardAt >= this.settings.leaseMs) {
        out.push({ job, kind: 'lapsed', workers: [...entry.takers], silentMs: now - entry.heardAt });
      }
    }
    return out;
  }
}
