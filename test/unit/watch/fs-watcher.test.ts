import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WatchFolder } from '../../../src/engine/watch/folder-tree.ts';
import { type FsWatcher, startFsWatcher } from '../../../src/engine/watch/fs-watcher.ts';
import type { FileChange } from '../../../src/engine/watch/types.ts';

let root: string | undefined;
let watcher: FsWatcher | undefined;

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

type Seen = { type: 'change'; change: FileChange } | { type: 'raw'; paths: string[] } | { type: 'folder'; rel: string; kind: string };

/** A watcher over a temp project, with every report in order and a way to wait for one. */
function watchProject(targets: string[], files: Record<string, string> = {}, watchFolder?: WatchFolder) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-fsw-'));
  root = dir;
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  const seen: Seen[] = [];
  const waiters: Array<() => void> = [];
  const record = (s: Seen): void => {
    seen.push(s);
    for (const w of waiters.splice(0)) w();
  };
  const errors: Error[] = [];
  watcher = startFsWatcher({
    root: dir,
    targets,
    onChange: (change) => record({ type: 'change', change }),
    onRaw: (paths) => record({ type: 'raw', paths }),
    onFolder: (rel, kind) => record({ type: 'folder', rel, kind }),
    onError: (e) => errors.push(e),
    ...(watchFolder ? { watchFolder } : {}),
  });
  const changes = (): string[] => seen.flatMap((s) => (s.type === 'change' ? [`${s.change.kind} ${s.change.path}`] : []));
  /** Resolves once a change `kind path` was reported. */
  const until = async (expected: string): Promise<void> => {
    while (!changes().includes(expected)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  const write = (rel: string, text = 'x'): void => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  };
  return { dir, seen, changes, until, write, errors, watcher };
}

describe('fs-watcher', () => {
  it('fs-watcher - a file added, changed and removed in a watched folder is reported as add, change, unlink', async () => {
    const p = watchProject(['src'], { 'src/a.txt': 'a' });
    await p.watcher.ready;
    p.write('src/b.txt');
    await p.until('add src/b.txt');
    p.write('src/a.txt', 'changed');
    await p.until('change src/a.txt');
    rmSync(path.join(p.dir, 'src/b.txt'));
    await p.until('unlink src/b.txt');
    expect(p.changes()).not.toContain('add src/a.txt');
    expect(p.errors).toEqual([]);
  });

  it('fs-watcher - a file renamed over another (an atomic write) is a change, and the raw notification comes first', async () => {
    const p = watchProject(['out/o.txt'], { 'out/o.txt': 'old' });
    await p.watcher.ready;
    writeFileSync(path.join(p.dir, 'out/.o.tmp'), 'new');
    renameSync(path.join(p.dir, 'out/.o.tmp'), path.join(p.dir, 'out/o.txt'));
    await p.until('change out/o.txt');
    const raw = p.seen.findIndex((s) => s.type === 'raw' && s.paths.includes('out/o.txt'));
    const change = p.seen.findIndex((s) => s.type === 'change' && s.change.path === 'out/o.txt');
    expect(raw).toBeGreaterThanOrEqual(0);
    expect(raw).toBeLessThan(change);
    // The scratch file is not a target: never reported.
    expect(p.changes().filter((c) => c.includes('.o.tmp'))).toEqual([]);
  });

  it('fs-watcher - a folder made inside a target is watched, files written into it at once are reported, after it is attached', async () => {
    const p = watchProject(['data'], { 'data/keep.txt': 'k' });
    await p.watcher.ready;
    p.write('data/new/deep/f.txt');
    await p.until('add data/new/deep/f.txt');
    expect(p.changes()).toEqual(expect.arrayContaining(['addDir data/new', 'addDir data/new/deep']));
    const attached = p.seen.findIndex((s) => s.type === 'folder' && s.rel === 'data/new' && s.kind === 'attached');
    const raw = p.seen.findIndex((s) => s.type === 'raw' && s.paths.includes('data/new'));
    expect(raw).toBeGreaterThanOrEqual(0);
    expect(attached).toBeGreaterThan(raw);
    // Watched from then on.
    p.write('data/new/deep/g.txt');
    await p.until('add data/new/deep/g.txt');
  });

  it('fs-watcher - a removed folder reports its files and itself gone, and one made again under the name is watched again', async () => {
    const p = watchProject(['logs'], { 'logs/t1/a.txt': 'a', 'logs/t1/sub/b.txt': 'b' });
    await p.watcher.ready;
    rmSync(path.join(p.dir, 'logs/t1'), { recursive: true });
    await p.until('unlinkDir logs/t1');
    expect(p.changes()).toEqual(expect.arrayContaining(['unlink logs/t1/a.txt', 'unlink logs/t1/sub/b.txt', 'unlinkDir logs/t1/sub']));
    expect(p.seen.some((s) => s.type === 'folder' && s.rel === 'logs/t1' && s.kind === 'detached')).toBe(true);
    p.write('logs/t1/c.txt');
    await p.until('add logs/t1/c.txt');
    p.write('logs/t1/c.txt', 'again');
    await p.until('change logs/t1/c.txt');
  });

  it('fs-watcher - paths outside the targets and in node_modules, .git or .refinery are not reported', async () => {
    const p = watchProject(['src'], { 'src/a.txt': 'a', 'other/x.txt': 'x' });
    await p.watcher.ready;
    p.write('other/y.txt');
    p.write('src/node_modules/m.js');
    p.write('src/.git/HEAD');
    p.write('.refinery/state/s.json');
    p.write('src/last.txt');
    await p.until('add src/last.txt');
    expect(p.changes().filter((c) => !c.startsWith('addDir src/'))).toEqual(['add src/last.txt']);
  });

  it('fs-watcher - a target whose folder does not exist yet is reported once it is created', async () => {
    const p = watchProject(['gen/a/out.txt']);
    await p.watcher.ready;
    p.write('gen/a/other.txt');
    p.write('gen/a/out.txt');
    await p.until('add gen/a/out.txt');
    expect(p.changes()).not.toContain('add gen/a/other.txt');
  });

  it('fs-watcher - new targets start being reported, in folders pruned before', async () => {
    const p = watchProject(['src'], { 'lib/x/a.txt': 'a' });
    await p.watcher.ready;
    p.watcher.setTargets(['src', 'lib/x']);
    expect(p.watcher.covers('lib/x/a.txt')).toBe(true);
    p.write('lib/x/a.txt', 'changed');
    await p.until('change lib/x/a.txt');
  });

  it('fs-watcher - a folder the system refuses to watch is reported with the fix, and nothing in it counts as covered', async () => {
    // As Linux refuses a watch past fs.inotify.max_user_watches.
    const refuseSrc: WatchFolder = (folder, listener) => {
      if (folder.endsWith(`${path.sep}src`)) {
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${folder}'`), { code: 'ENOSPC' });
      }
      return watch(folder, { persistent: true }, listener);
    };
    const p = watchProject(['src', 'data'], { 'src/a.txt': 'a', 'src/deep/b.txt': 'b', 'data/c.txt': 'c' }, refuseSrc);
    await p.watcher.ready;
    expect(p.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^cannot watch src: ENOSPC.*raise fs\.inotify\.max_user_watches/),
    ]);
    // A change there would go unseen: the daemon's ledger must stat these, not trust the silence.
    for (const rel of ['src', 'src/a.txt', 'src/deep/b.txt', 'src/new.txt']) expect(p.watcher.covers(rel)).toBe(false);
    for (const rel of ['data', 'data/c.txt', 'data/new.txt']) expect(p.watcher.covers(rel)).toBe(true);
    p.write('data/c.txt', 'changed');
    await p.until('change data/c.txt');
  });

  it('fs-watcher - notifications that name no entry still report additions, changes and removals', async () => {
    // As on a platform whose watches cannot say which entry changed.
    const nameless: WatchFolder = (folder, listener) => watch(folder, { persistent: true }, (event) => listener(event, null));
    const p = watchProject(['src'], { 'src/a.txt': 'a', 'src/b.txt': 'b' }, nameless);
    await p.watcher.ready;
    rmSync(path.join(p.dir, 'src/b.txt'));
    await p.until('unlink src/b.txt');
    p.write('src/c.txt');
    await p.until('add src/c.txt');
    expect(p.changes()).not.toContain('add src/a.txt');
  });

  it('fs-watcher - a symbolic link to a folder is an entry of its own, not followed', async () => {
    const p = watchProject(['src'], { 'elsewhere/t.txt': 't', 'src/a.txt': 'a' });
    await p.watcher.ready;
    symlinkSync(path.join(p.dir, 'elsewhere'), path.join(p.dir, 'src/link'));
    await p.until('add src/link');
    p.write('elsewhere/t.txt', 'changed');
    p.write('src/a.txt', 'changed');
    await p.until('change src/a.txt');
    expect(p.changes().filter((c) => c.includes('src/link/'))).toEqual([]);
  });
});
