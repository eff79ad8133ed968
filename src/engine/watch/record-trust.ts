import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { ancestorDirs } from '../paths/ancestors.ts';
import type { NoopRecord } from '../state/noop-record.ts';
import { type RecordUpdate, type RecordVouch, readManifest } from '../state/run-manifest.ts';
import type { ChangeLedger } from './change-ledger.ts';

type Stamp = [number, number, number];

/** A record sorted for quick answers. */
interface Prepared {
  record: NoopRecord;
  /** Each recorded path's index in `record.paths`. */
  index: Map<string, number>;
  /** Recorded paths the watcher cannot vouch for: not covered, not watched since the epoch, symbolic links or under one. */
  unvouched: Set<string>;
  /** Every folder above a recorded path: a change naming one puts every path under it in doubt. */
  folders: Set<string>;
}

interface Held {
  epoch: number;
  /** The record file's own stat when it held: anyone rewriting it ends the trust. */
  stamp: Stamp;
  prepared: Prepared | undefined;
}

/**
 * Which no-op records (`.refinery/state/noop-*.json`) the watch daemon can vouch for, and since
 * when. A record that held at epoch S still holds for every path the ChangeLedger saw no change
 * of after S, except paths the watcher cannot see change: outside what it covers, symbolic
 * links (it sees the link, not what it points to) and what lies under them. Those, and the
 * paths it saw change, are all a run asking the daemon has to stat. Sorting a record is done
 * once in full, then only for the paths a run looked at or the watcher saw change.
 */
export class RecordTrust {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly root: string,
    private readonly ledger: ChangeLedger,
  ) {}

  recordHolds(recordFile: string, epoch: number, update: RecordUpdate): void {
    const stamp = statOf(recordFile);
    const before = this.held.get(recordFile);
    if (!stamp) {
      this.held.delete(recordFile);
      return;
    }
    const entry: Held = { epoch, stamp, prepared: undefined };
    this.held.set(recordFile, entry);
    const previous = before?.prepared;
    if (update.kind === 'confirmed') {
      if (previous && before && sameStamp(before.stamp, stamp))
        entry.prepared = this.update(previous, previous.record, before.epoch, epoch, []);
      return;
    }
    if (update.record && previous && before && update.observed) {
      // Sorted after the answer is sent too: indexing a new record (20,000 paths at 10,000
      // stages) took 2-5 ms of a served touch before its exit reached the client. A vouch asked
      // for meanwhile finds nothing prepared, and its run stats everything: slower, never wrong.
      const { record } = update;
      const observed = [...update.observed];
      setImmediate(() => {
        if (this.held.get(recordFile) === entry) entry.prepared = this.update(previous, record, before.epoch, epoch, observed);
      });
      return;
    }
    // Read and sorted after the answer is sent, off the path of any request.
    setImmediate(() => {
      if (this.held.get(recordFile) !== entry) return;
      const record = update.record ?? readManifest(recordFile);
      const now = statOf(recordFile);
      if (!record || typeof record === 'string' || !now || !sameStamp(now, entry.stamp)) this.held.delete(recordFile);
      else entry.prepared = this.prepare(record, epoch);
    });
  }

  /** The record and the paths that may have changed since it held; undefined when the daemon cannot say. */
  vouch(recordFile: string): RecordVouch | undefined {
    const entry = this.held.get(recordFile);
    if (!entry?.prepared) return undefined;
    const now = statOf(recordFile);
    if (!now || !sameStamp(now, entry.stamp)) {
      this.held.delete(recordFile);
      return undefined;
    }
    const seen = this.ledger.changedSince(entry.epoch);
    if (!seen) return undefined;
    const { record, index, unvouched, folders } = entry.prepared;
    const doubt = new Set<number>();
    for (const rel of unvouched) doubt.add(index.get(rel) as number);
    for (const rel of inDoubt(index, folders, seen)) doubt.add(index.get(rel) as number);
    return { record, mayHaveChanged: doubt };
  }

  private prepare(record: NoopRecord, epoch: number): Prepared {
    const folders = new Set<string>();
    const links = new LinkCheck(this.root);
    const unvouched = new Set<string>();
    const index = indexOf(record);
    for (const rel of record.paths) {
      for (const dir of ancestorDirs(rel)) folders.add(dir);
      if (!this.ledger.watches(rel, epoch) || links.under(rel)) unvouched.add(rel);
    }
    return { record, index, unvouched, folders };
  }

  /** Sorts again only what may have changed between the epochs: the paths a run looked at and those the watcher saw change. */
  private update(previous: Prepared, record: NoopRecord, from: number, epoch: number, observed: Iterable<string>): Prepared | undefined {
    const seen = this.ledger.changedSince(from);
    if (!seen) return undefined;
    const recheck = new Set([...observed, ...inDoubt(previous.index, previous.folders, seen)]);
    const folders = new Set(previous.folders);
    const index = record === previous.record ? previous.index : indexOf(record);
    const unvouched = new Set([...previous.unvouched].filter((p) => !recheck.has(p) && index.has(p)));
    const links = new LinkCheck(this.root);
    // Paths new to the record were looked at by the run that wrote it: they are in `observed`.
    for (const rel of recheck) {
      if (!index.has(rel)) continue;
      for (const dir of ancestorDirs(rel)) folders.add(dir);
      if (!this.ledger.watches(rel, epoch) || links.under(rel)) unvouched.add(rel);
    }
    return { record, index, unvouched, folders };
  }
}

function indexOf(record: NoopRecord): Map<string, number> {
  const index = new Map<string, number>();
  record.paths.forEach((rel, i) => index.set(rel, i));
  return index;
}

/** The recorded paths a set of changes puts in doubt: those named, and all under a folder named. */
function inDoubt(index: ReadonlyMap<string, number>, folders: ReadonlySet<string>, seen: ReadonlySet<string>): Set<string> {
  const doubt = new Set<string>();
  const doubtedFolders: string[] = [];
  for (const p of seen) {
    if (index.has(p)) doubt.add(p);
    if (folders.has(p)) doubtedFolders.push(`${p}/`);
  }
  if (doubtedFolders.length > 0) for (const f of index.keys()) if (doubtedFolders.some((d) => f.startsWith(d))) doubt.add(f);
  return doubt;
}

/** Whether a path is a symbolic link or lies under one; each folder is looked at once. */
class LinkCheck {
  private readonly folders = new Map<string, boolean>();

  constructor(private readonly root: string) {}

  under(rel: string): boolean {
    if (path.isAbsolute(rel) || isLink(path.join(this.root, rel))) return true;
    return ancestorDirs(rel).some((dir) => {
      let known = this.folders.get(dir);
      if (known === undefined) {
        known = isLink(path.join(this.root, dir));
        this.folders.set(dir, known);
      }
      return known;
    });
  }
}

function sameStamp(a: Stamp, b: Stamp): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

function isLink(abs: string): boolean {
  try {
    return lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}

function statOf(file: string): Stamp | undefined {
  try {
    const st = statSync(file);
    return [st.size, st.mtimeMs, st.ino];
  } catch {
    return undefined;
  }
}
