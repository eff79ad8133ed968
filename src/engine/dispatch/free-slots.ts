// The workers' free slots as a coordinator last heard them, over plain data and a clock passed in.
// The coordinator sends a job only while some worker has a slot for it that no job on its way
// claims: a job then never waits in a worker's connection or queue behind others, and the time a
// job waits because every slot is taken is spent here, where it is queueing, not in a trip.
// Shared subscriptions choose the worker, so this counts slots, not which worker gets which job.

/** A worker says its free slots at least this often, so that a coordinator that starts late learns them. */
export const ANNOUNCE_MS = 1000;
/** A worker not heard from for this long counts as gone: its slots are not counted. */
export const SLOTS_LIVE_MS = 3 * ANNOUNCE_MS + 500;

interface Heard {
  free: number;
  seq: number;
  at: number;
}

export class FreeSlots {
  private readonly workers = new Map<string, Heard>();
  private lastHeard: number | undefined;

  /** A worker's word on its free slots; an older word (a lower `seq`, overtaken on the way) is ignored. */
  update(worker: string, free: number, seq: number, now: number): void {
    const known = this.workers.get(worker);
    if (known && seq < known.seq) {
      known.at = now;
    } else {
      this.workers.set(worker, { free, seq, at: now });
    }
    this.lastHeard = now;
  }

  /** Any word from a worker: it is alive, its count stands. */
  heard(worker: string, now: number): void {
    const known = this.workers.get(worker);
    if (known) known.at = now;
    this.lastHeard = now;
  }

  /** When some worker was last heard from; undefined when none has been. */
  lastHeardAt(): number | undefined {
    return this.lastHeard;
  }

  /** Free slots over the workers heard from lately. */
  free(now: number): number {
    let sum = 0;
    for (const [worker, heard] of this.workers) {
      if (now - heard.at > SLOTS_LIVE_MS) this.workers.delete(worker);
      else sum += heard.free;
    }
    return sum;
  }
}
