import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { WatchProcess } from './watch-process.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

const BASIC = `pipeline: p
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  b: { run: "cat out/a.txt out/a.txt > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }
  listing: { run: "ls data > \${outputs.o}", inputs: ["data/**"], outputs: { o: data/listing.txt } }
  other: { run: "cat src/other.txt > \${outputs.o}", inputs: [src/other.txt], outputs: { o: out/other.txt } }
`;

function basicProject(): TempProject {
  return tempProject({ 'pipelines/p.yaml': BASIC, 'src/a.txt': 'a1\n', 'src/other.txt': 'o1\n', 'data/x.txt': 'x1\n' });
}

/** Stage ids that started in the n-th run (1-based), sorted. */
function startedInRun(w: WatchProcess, n: number): string[] {
  const runIds = w.events.filter((e) => e.type === 'run-start').map((e) => e.runId);
  const id = runIds[n - 1];
  return w.events
    .filter((e) => e.type === 'stage-start' && e.runId === id)
    .map((e) => e.stage as string)
    .sort();
}

/** A change to `other` and its run: every run caused by earlier changes has been seen once it ended. */
async function sentinel(w: WatchProcess, p: TempProject, content: string): Promise<void> {
  const before = w.count('stage-end', 'other', 'succeeded');
  p.write('src/other.txt', content);
  await w.nth(before + 1, 'stage-end', 'other', 'succeeded');
  await w.nth(w.count('run-start'), 'run-end');
}

describe('refinery watch', () => {
  it('watch - a change reruns the stage and what is downstream; their own outputs never retrigger them', async () => {
    project = basicProject();
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    expect(startedInRun(watcher, 1)).toEqual(['a', 'b', 'listing', 'other']);
    project.write('src/a.txt', 'a2\n');
    project.write('data/y.txt', 'y\n');
    await watcher.nth(2, 'run-end');
    expect(startedInRun(watcher, 2)).toEqual(['a', 'b', 'listing']);
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('a2\na2\n');
    await sentinel(watcher, project, 'o2\n');
    // Run 3 is the sentinel's: out/a.txt, out/b.txt and data/listing.txt being written caused no run.
    expect(watcher.count('run-start')).toBe(3);
    expect(startedInRun(watcher, 3)).toEqual(['other']);
  });

  it('watch - touching a file without changing its content runs nothing', async () => {
    project = basicProject();
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    project.write('src/a.txt', 'a1\n');
    await sentinel(watcher, project, 'o2\n');
    expect(watcher.events.filter((e) => e.type === 'stage-start' && e.stage === 'a')).toHaveLength(1);
  });

  it('watch - an editor-style save (temp file renamed over the original) is seen', async () => {
    project = basicProject();
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    writeFileSync(project.path('src/.a.txt.swp-like'), 'saved\n');
    renameSync(project.path('src/.a.txt.swp-like'), project.path('src/a.txt'));
    await watcher.nth(2, 'stage-end', 'b', 'succeeded');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('saved\nsaved\n');
    // A second save of the same kind: the watch on the replaced file survived the first one.
    writeFileSync(project.path('src/a.txt.tmp'), 'saved again\n');
    renameSync(project.path('src/a.txt.tmp'), project.path('src/a.txt'));
    await watcher.nth(3, 'stage-end', 'b', 'succeeded');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('saved again\nsaved again\n');
  });

  it('watch - a burst of 1,000 file writes runs each affected stage exactly once', async () => {
    const files: Record<string, string> = {
      'pipelines/p.yaml': `pipeline: p
stages:
  concat: { run: "cat data/*.txt > \${outputs.o}", inputs: ["data/*.txt"], outputs: { o: out/concat.txt } }
  count: { run: "wc -l < out/concat.txt > \${outputs.o}", inputs: [out/concat.txt], outputs: { o: out/count.txt } }
  other: { run: "cat src/other.txt > \${outputs.o}", inputs: [src/other.txt], outputs: { o: out/other.txt } }
`,
      'src/other.txt': 'o1\n',
    };
    for (let i = 0; i < 1000; i += 1) files[`data/${String(i).padStart(4, '0')}.txt`] = `v1 ${i}\n`;
    project = tempProject(files);
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    // As a checkout does: every file rewritten. The watcher is stopped meanwhile, so that a pause
    // of this writer on a loaded machine (50 ms of real quiet) cannot end the burst early; the
    // notifications wait in the kernel, as they do for a watcher the OS has not scheduled.
    watcher.signal('SIGSTOP');
    try {
      for (let i = 0; i < 1000; i += 1) writeFileSync(project.path(`data/${String(i).padStart(4, '0')}.txt`), `v2 ${i}\n`);
    } finally {
      watcher.signal('SIGCONT');
    }
    await watcher.nth(2, 'stage-end', 'count', 'succeeded');
    await sentinel(watcher, project, 'o2\n');
    expect(watcher.count('stage-start', 'concat')).toBe(2);
    expect(watcher.count('stage-start', 'count')).toBe(2);
    expect(readFileSync(project.path('out/count.txt'), 'utf8').trim()).toBe('1000');
    expect(readFileSync(project.path('out/concat.txt'), 'utf8')).not.toContain('v1 ');
  });

  it.skipIf(process.platform !== 'linux')(
    'watch - 500 stages with their sources and outputs take one inotify watch per folder, not one per file',
    async () => {
      const files: Record<string, string> = {};
      const stages: string[] = [];
      for (let i = 0; i < 500; i += 1) {
        files[`src/f${i}.txt`] = `${i}\n`;
        stages.push(`  s${i}: { run: "cat src/f${i}.txt > \${outputs.o}", inputs: [src/f${i}.txt], outputs: { o: out/s${i}.txt } }`);
      }
      files['pipelines/p.yaml'] = `pipeline: p\nstages:\n${stages.join('\n')}\n`;
      project = tempProject(files);
      watcher = new WatchProcess([], project.root);
      await watcher.nth(1, 'run-end');
      // The kernel lists each watch of an inotify descriptor as an "inotify wd:" line of its fdinfo.
      const fdinfo = `/proc/${watcher.pid}/fdinfo`;
      const watches = readdirSync(fdinfo)
        .map((fd) => {
          try {
            return readFileSync(`${fdinfo}/${fd}`, 'utf8');
          } catch {
            return '';
          }
        })
        .reduce((n, text) => n + text.split('\n').filter((l) => l.startsWith('inotify wd:')).length, 0);
      // The root, pipelines/, src/, out/ and the watch's own socket folder (a few more at most): not 1,000.
      expect(watches).toBeGreaterThanOrEqual(4);
      expect(watches).toBeLessThan(12);
      // And the watch still sees a change in the folder of 500.
      project.write('src/f250.txt', 'changed\n');
      await watcher.nth(2, 'stage-end', 's250', 'succeeded');
      expect(readFileSync(project.path('out/s250.txt'), 'utf8')).toBe('changed\n');
    },
  );

  it('watch - a change during a run gives exactly one follow-up run', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  slow: { run: "cat src/in.txt > \${outputs.o}; while [ ! -e gate ]; do sleep 0.01; done", inputs: [src/in.txt], outputs: { o: out/slow.txt } }
  other: { run: "cat src/other.txt > \${outputs.o}", inputs: [src/other.txt], outputs: { o: out/other.txt } }
`,
      'src/in.txt': 'v1\n',
      'src/other.txt': 'o1\n',
      gate: '',
    });
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    rmGate(project);
    project.write('src/in.txt', 'v2\n');
    await watcher.nth(2, 'stage-start', 'slow');
    for (const v of ['v3', 'v4', 'v5']) project.write('src/in.txt', `${v}\n`);
    await watcher.until(() => changeNotices(watcher) >= 2, 'the change notice during the run');
    expect(watcher.count('stage-end', 'slow')).toBe(1);
    project.write('gate', '');
    await watcher.nth(3, 'stage-end', 'slow', 'succeeded');
    await sentinel(watcher, project, 'o2\n');
    expect(watcher.count('stage-start', 'slow')).toBe(3);
    expect(readFileSync(project.path('out/slow.txt'), 'utf8')).toBe('v5\n');
  });

  it('watch - --on-busy restart aborts the running stage through its signal and runs it again', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  slow: { run: "cat src/in.txt > \${outputs.o}; while [ ! -e gate ]; do sleep 0.01; done", inputs: [src/in.txt], outputs: { o: out/slow.txt } }
`,
      'src/in.txt': 'v1\n',
      gate: '',
    });
    watcher = new WatchProcess(['--on-busy', 'restart'], project.root);
    await watcher.nth(1, 'run-end');
    rmGate(project);
    project.write('src/in.txt', 'v2\n');
    await watcher.nth(2, 'stage-start', 'slow');
    project.write('src/in.txt', 'v3\n');
    await watcher.nth(1, 'stage-end', 'slow', 'aborted');
    await watcher.nth(3, 'stage-start', 'slow');
    project.write('gate', '');
    await watcher.nth(2, 'stage-end', 'slow', 'succeeded');
    expect(readFileSync(project.path('out/slow.txt'), 'utf8')).toBe('v3\n');
    expect(watcher.stderr).toContain('aborting it to run again');
  });

  it('watch - an invalid pipeline edit prints located diagnostics and the last good version keeps running', async () => {
    project = basicProject();
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    project.write('pipelines/p.yaml', BASIC.replace('  other: {', '  other: { outptus: 1,'));
    await watcher.until(() => watcher?.stderr.includes('keeps running its last good version') ?? false, 'the reload failure');
    await watcher.until(() => /pipelines\/p\.yaml:6:12/.test(watcher?.stderr ?? ''), 'a located diagnostic');
    project.write('src/a.txt', 'a3\n');
    await watcher.nth(2, 'stage-end', 'b', 'succeeded');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('a3\na3\n');
    // A valid edit is loaded: `b` has a new command, so it runs again.
    project.write('pipelines/p.yaml', BASIC.replace('cat out/a.txt out/a.txt', 'cat out/a.txt'));
    await watcher.nth(3, 'stage-end', 'b', 'succeeded');
    expect(watcher.stderr).toContain("pipeline 'p' reloaded");
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('a3\n');
  });

  it('watch - SIGINT lets the running stage finish, leaves state consistent and exits 0', async () => {
    project = gatedProject();
    watcher = new WatchProcess([], project.root);
    await signalWhileRunning(watcher);
    await watcher.until(() => watcher?.stderr.includes('stopping: waiting for p') ?? false, 'the stopping notice');
    project.write('gate', '');
    expect(await watcher.exited).toEqual({ code: 0, signal: null });
    expect(watcher.count('stage-end', 'slow', 'succeeded')).toBe(1);
    const after = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(after.stdout)).toEqual({ slow: 'fresh' });
  });

  it('watch - a stage whose stale_if holds runs again with no file changing, until its result says it is done', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  turn:
    task: age-state
    with: { file: src/started.txt }
    inputs: [src/started.txt]
    outputs: { o: out/state.json }
    stale_if: "self.o.state == 'in_progress'"
`,
      // In progress while its input is younger than 4 s, as analyze-turn judges a silent MassGen run.
      'tasks/age-state.ts': `import { statSync, writeFileSync } from 'node:fs';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'age-state', params: z.object({ file: z.string() }), async run(ctx) {
  const age = Date.now() - statSync(ctx.params.file).mtimeMs;
  writeFileSync(ctx.outputs.o, JSON.stringify({ state: age < 4000 ? 'in_progress' : 'done' }));
} });
`,
    });
    project.write('src/started.txt', 'now\n');
    const state = (): string => JSON.parse(readFileSync(project?.path('out/state.json') ?? '', 'utf8')).state as string;
    watcher = new WatchProcess(['--recheck', '300'], project.root);
    await watcher.nth(1, 'stage-end', 'turn', 'succeeded');
    expect(state()).toBe('in_progress');
    await watcher.until(() => state() === 'done', 'the turn to be done without a change', 30_000);
    expect(watcher.count('stage-end', 'turn', 'succeeded')).toBeGreaterThanOrEqual(2);
    expect(watcher.stderr).toContain('turn asked to be redone (stale_if); running again');
    expect(watcher.stderr).not.toMatch(/changed: src\/started\.txt/);
  });

  it('watch - a second SIGINT aborts the running stage; it is left stale, and the exit code is 0', async () => {
    project = gatedProject();
    watcher = new WatchProcess([], project.root);
    await signalWhileRunning(watcher);
    await watcher.until(() => watcher?.stderr.includes('stopping') ?? false, 'the stopping notice');
    watcher.signal('SIGINT');
    expect(await watcher.exited).toEqual({ code: 0, signal: null });
    expect(watcher.count('stage-end', 'slow', 'aborted')).toBe(1);
    project.write('gate', '');
    const after = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(after.stdout)).toEqual({ slow: 'succeeded' });
  });
});

/** One stage that runs until a file named `gate` appears. */
function gatedProject(): TempProject {
  return tempProject({
    'pipelines/p.yaml': `pipeline: p
stages:
  slow: { run: "cat src/in.txt > \${outputs.o}; while [ ! -e gate ]; do sleep 0.01; done", inputs: [src/in.txt], outputs: { o: out/slow.txt } }
`,
    'src/in.txt': 'v1\n',
  });
}

/** Sends SIGINT once the gated stage is running. */
async function signalWhileRunning(w: WatchProcess): Promise<void> {
  await w.nth(1, 'stage-start', 'slow');
  w.signal('SIGINT');
}

function rmGate(p: TempProject): void {
  rmSync(p.path('gate'));
}

/** How many debounced batches held src/in.txt (the `-v` notices). */
function changeNotices(w: WatchProcess | undefined): number {
  return (w?.stderr.match(/changed: src\/in\.txt/g) ?? []).length;
}
