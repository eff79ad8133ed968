import { ancestorDirs } from '../paths/ancestors.ts';

/**
 * What the file watcher has seen, as sequence numbers: every raw notification bumps the
 * sequence and stamps the paths it names. A record of the disk taken at sequence S (an
 * "epoch") still holds for a path when nothing stamped the path or a folder above it after S,
 * and the folders above it were watched since before S.
 *
 * The invariant this keeps: `unchangedSince(rel, S)` is true only if every change the kernel
 * reported for `rel` after S has been seen. It is kept by answering false whenever in doubt: a
 * folder created and not yet watched, a folder re-created since it was watched, a path the
 * watcher does not cover, and every path once the notifications since S were so many that the
 * kernel's queue may have overflowed (it drops events silently then).
 */
export class ChangeLedger {
  private sequence = 0;
  private readonly lastSeen = new Map<string, number>();
  /** The paths stamped, in order, with their sequence; cut short when long (epochs before the cut are not vouched for). */
  private log: Array<[number, string]> = [];
  private loggedFrom = 0;
  /** Folders the watcher (re)attached to after it was ready, with the sequence then. */
  private readonly attachedAt = new Map<string, number>();
  private readySequence: number | undefined;
  /** Sequence numbers at which a flood of notifications may have overflowed the kernel's queue. */
  private floodAt = -1;
  private sinceFloodCheck = 0;

  constructor(
    /** Whether the watcher covers the path (it or a folder above it is a target, or it is on the way to one). */
    private readonly covers: (rel: string) => boolean,
    /** Notifications between two epochs from which on a lost one is possible (half the kernel's queue). */
    private readonly floodLimit = 8192,
  ) {}

  /** The current sequence: an epoch for a record of the disk taken from now on. */
  get now(): number {
    return this.sequence;
  }

  /** The watcher finished its first scan: every folder it covers is watched from here on. */
  ready(): void {
    this.readySequence = this.sequence;
  }

  /** A raw notification naming these root-relative paths (the folder watched and the entry). */
  saw(paths: readonly string[]): void {
    this.sequence += 1;
    for (const p of paths) {
      this.lastSeen.set(p, this.sequence);
      this.log.push([this.sequence, p]);
    }
    if (this.log.length > 200_000) {
      this.log = this.log.slice(100_000);
      this.loggedFrom = (this.log[0] as [number, string])[0] - 1;
    }
    // A notification naming no path under the root (the root itself): anything may have changed.
    if (paths.length === 0 || paths.includes('')) this.floodAt = this.sequence;
    this.sinceFloodCheck += 1;
    if (this.sinceFloodCheck >= this.floodLimit) this.floodAt = this.sequence;
  }

  /** An epoch was taken: the flood count starts again. */
  epochTaken(): number {
    this.sinceFloodCheck = 0;
    return this.sequence;
  }

  /** The watcher attached to a folder created after it was ready. */
  attached(dir: string): void {
    this.sequence += 1;
    this.attachedAt.set(dir, this.sequence);
    this.log.push([this.sequence, dir]);
  }

  /** A watched folder went away. */
  detached(dir: string): void {
    this.sequence += 1;
    this.attachedAt.delete(dir);
    this.lastSeen.set(dir, this.sequence);
    this.log.push([this.sequence, dir]);
  }

  /** Whether anything seen after `epoch` can be listed (no flood since, the log reaches back to it). */
  trustworthySince(epoch: number): boolean {
    return this.readySequence !== undefined && epoch >= this.readySequence && this.floodAt <= epoch && epoch >= this.loggedFrom;
  }

  /** The paths stamped after `epoch` (files, and folders when they themselves were named); undefined when not trustworthy. */
  changedSince(epoch: number): Set<string> | undefined {
    if (!this.trustworthySince(epoch)) return undefined;
    const out = new Set<string>();
    for (let i = this.log.length - 1; i >= 0; i -= 1) {
      const [seq, p] = this.log[i] as [number, string];
      if (seq <= epoch) break;
      out.add(p);
    }
    return out;
  }

  /**
   * Whether every change to `rel` after `epoch` is reported: the watcher covers it and watched
   * every folder above it from `epoch` on (changes seen after `epoch` are for changedSince).
   */
  watches(rel: string, epoch: number): boolean {
    if (!this.trustworthySince(epoch)) return false;
    if (rel === '' || rel.startsWith('/') || rel.startsWith('../') || rel === '..' || !this.covers(rel)) return false;
    for (const dir of ancestorDirs(rel)) {
      const seen = this.lastSeen.get(dir);
      if (seen !== undefined && seen > epoch) continue;
      if (!this.watchedBy(dir, seen, epoch)) return false;
    }
    return true;
  }

  /** True when no change to `rel` can have happened after `epoch` unseen. */
  unchangedSince(rel: string, epoch: number): boolean {
    if (!this.trustworthySince(epoch)) return false;
    if (rel === '' || rel.startsWith('/') || rel.startsWith('../') || rel === '..' || !this.covers(rel)) return false;
    if ((this.lastSeen.get(rel) ?? 0) > epoch) return false;
    for (const dir of ancestorDirs(rel)) {
      const seen = this.lastSeen.get(dir);
      if (seen !== undefined && seen > epoch) return false;
      if (!this.watchedBy(dir, seen, epoch)) return false;
    }
    return true;
  }

  /** Whether the folder was watched from `epoch` on (a folder seen changing after it was attached is not, until attached again). */
  private watchedBy(dir: string, seen: number | undefined, epoch: number): boolean {
    const attached = this.attachedAt.get(dir);
    if (attached !== undefined) return attached <= epoch && (seen === undefined || seen < attached);
    // Never re-attached: watched since the first scan, unless it changed (was created) after that.
    return seen === undefined || seen <= (this.readySequence as number);
  }
}
