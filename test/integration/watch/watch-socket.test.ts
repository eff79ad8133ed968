import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLI,
  interruptOnceItPrints,
  REPO_ROOT,
  runCli,
  startCli,
  stageEnds,
  tempProject,
  type TempProject,
} from '../../helpers/project.ts';
import { WatchProcess } from './watch-process.ts';
import { setMtime } from '../../helpers/mtime.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

const PIPELINE = `pipeline: p
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  b: { run: "cat out/a.txt out/a.txt > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }
  other: { run: "cat src/other.txt > \${outputs.o}", inputs: [src/other.txt], outputs: { o: out/other.txt } }
`;

function basicProject(extra: Record<string, string> = {}): TempProject {
  return tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a1\n', 'src/other.txt': 'o1\n', ...extra });
}

/** A watch whose first run has ended and whose socket answers. */
async function startWatch(p: TempProject, args: string[] = []): Promise<WatchProcess> {
  const w = new WatchProcess(args, p.root);
  await w.nth(1, 'run-end');
  await w.until(() => w.stderr.includes('answered by this watch'), 'the socket to be served');
  return w;
}

const WITHOUT_DAEMON = { REFINERY_NO_DAEMON: '1' };

describe('refinery run, plan and status through a running watch', () => {
  it('run through watch - a no-op is answered by the watch with the answer and exit code of a run without it', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const through = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(through.stderr).toBe('');
    expect(through.code).toBe(0);
    expect(stageEnds(through.stdout)).toEqual({ a: 'fresh', b: 'fresh', other: 'fresh' });
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    await watcher.stop();
    watcher = undefined;
    const alone = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(alone.code).toBe(0);
    expect(stageEnds(alone.stdout)).toEqual(stageEnds(through.stdout));
  });

  it('run through watch - a file written just before the run is never missed', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    for (let i = 0; i < 12; i += 1) {
      project.write('src/a.txt', `v${i}\n`);
      const r = await runCli(['run', 'p', '--json'], { cwd: project.root });
      expect(r.code).toBe(0);
      // Whoever ran it (the watch on its own, or the run asking it), it is done when the run returns.
      expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe(`v${i}\nv${i}\n`);
    }
    expect(await watcher.answeredTimes('run', 12)).toBe(12);
    expect(watcher.stderr).not.toContain('refused');
  });

  it('run through watch - a rewrite that keeps size, inode and mtime (a racy timestamp) is still seen', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    // Make the watch hold the record as written by a run it answered.
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    project.write('src/a.txt', 'r1\n');
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('r1\n');
    const before = statSync(project.path('src/a.txt'), { bigint: true });
    project.write('src/a.txt', 'r2\n');
    setMtime(project.path('src/a.txt'), before.mtimeNs);
    const after = statSync(project.path('src/a.txt'), { bigint: true });
    expect([after.size, after.ino, after.mtimeNs]).toEqual([before.size, before.ino, before.mtimeNs]);
    const r = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(r.code).toBe(0);
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('r2\n');
  });

  it('plan and status through watch - the same output as without it', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    project.write('src/a.txt', 'a2\n');
    await watcher.nth(2, 'run-end');
    for (const command of [['plan', 'p'], ['status']]) {
      const through = await runCli(command, { cwd: project.root });
      const alone = await runCli(command, { cwd: project.root, env: WITHOUT_DAEMON });
      expect(through.code).toBe(alone.code);
      expect(through.stdout).toBe(alone.stdout);
      expect(through.stdout.length).toBeGreaterThan(0);
    }
    expect(await watcher.answeredTimes('plan', 1)).toBe(1);
    expect(await watcher.answeredTimes('status', 1)).toBe(1);
  });

  it('run through watch - exit codes are the run’s: a failing stage 1, a wrong argument 2', async () => {
    project = basicProject({
      'pipelines/f.yaml': 'pipeline: f\nstages:\n  bad: { run: "echo nope >&2; exit 3", outputs: { o: out/bad.txt } }\n',
    });
    watcher = await startWatch(project, ['p', 'f']);
    const failing = await runCli(['run', 'f', '--json'], { cwd: project.root });
    expect(failing.code).toBe(1);
    expect(stageEnds(failing.stdout)).toEqual({ bad: 'failed' });
    const wrong = await runCli(['run', 'p', '--param', 'nope=1'], { cwd: project.root });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('nope');
    const alone = await runCli(['run', 'p', '--param', 'nope=1'], { cwd: project.root, env: WITHOUT_DAEMON });
    expect(alone.stderr).toBe(wrong.stderr);
  });

  it('run through watch - Ctrl-C in the asking terminal aborts the run it asked for (130); the watch goes on', async () => {
    project = basicProject({
      'pipelines/g.yaml': `pipeline: g
stages:
  slow: { run: "while [ ! -e gate ]; do sleep 0.05; done; cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/slow.txt } }
`,
      gate: '',
    });
    watcher = await startWatch(project, ['g']);
    project.write('gate', '');
    const { rmSync } = await import('node:fs');
    rmSync(project.path('gate'));
    const child = startCli(['run', 'g', '--force', '--json'], { cwd: project.root });
    expect(await interruptOnceItPrints(child, '"stage-start"')).toBe(130);
    await watcher.until(() => (watcher as WatchProcess).answered('run') === 1, 'the run to be answered');
    expect(watcher.stderr).toContain('answered a run (exit 130)');
    project.write('gate', '');
    const again = await runCli(['run', 'g', '--json'], { cwd: project.root });
    expect(again.code).toBe(0);
    expect(stageEnds(again.stdout)).toEqual({ slow: 'succeeded' });
  });

  it('run through watch - a project deeper than a unix socket path allows is served, from inside it and from elsewhere', async () => {
    project = tempProject();
    // .refinery/watch/sock under this folder is far past the 104 bytes a socket address holds.
    const deep = path.join(project.root, 'a'.repeat(60), 'b'.repeat(60));
    mkdirSync(path.join(deep, 'node_modules'), { recursive: true });
    symlinkSync(REPO_ROOT, path.join(deep, 'node_modules', 'refinery'), 'dir');
    writeFileSync(path.join(deep, 'package.json'), '{ "type": "module", "private": true }\n');
    for (const [rel, text] of Object.entries({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a1\n', 'src/other.txt': 'o1\n' })) {
      mkdirSync(path.dirname(path.join(deep, rel)), { recursive: true });
      writeFileSync(path.join(deep, rel), text);
    }
    expect(Buffer.byteLength(path.join(deep, '.refinery', 'watch', 'sock'))).toBeGreaterThan(108);
    watcher = await startWatch({ ...project, root: deep });
    const inside = await runCli(['run', 'p', '--json'], { cwd: path.join(deep, 'src') });
    expect(inside.code).toBe(0);
    expect(stageEnds(inside.stdout)).toEqual({ a: 'fresh', b: 'fresh', other: 'fresh' });
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    // From the file system's root, the path from the working folder is as long: the folder is named through a descriptor.
    writeFileSync(path.join(deep, 'src/a.txt'), 'a2\n');
    const elsewhere = await runCli(['-C', deep, 'run', 'p', '--json'], { cwd: '/' });
    expect(elsewhere.code).toBe(0);
    expect(await watcher.answeredTimes('run', 2)).toBe(2);
    expect(readFileSync(path.join(deep, 'out/b.txt'), 'utf8')).toBe('a2\na2\n');
    // A watch started from elsewhere names its socket through a descriptor too.
    await watcher.stop();
    watcher = new WatchProcess([], '/', { directory: deep });
    await watcher.nth(1, 'run-end');
    await watcher.until(() => watcher?.stderr.includes('answered by this watch') ?? false, 'the socket to be served');
    writeFileSync(path.join(deep, 'src/a.txt'), 'a3\n');
    const third = await runCli(['run', 'p', '--json'], { cwd: deep });
    expect(third.code).toBe(0);
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    expect(readFileSync(path.join(deep, 'out/b.txt'), 'utf8')).toBe('a3\na3\n');
  });

  it('run through watch - a watch that was killed leaves a socket the next run ignores', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    watcher.signal('SIGKILL');
    await watcher.exited;
    watcher = undefined;
    project.write('src/a.txt', 'a3\n');
    const r = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(r.code).toBe(0);
    expect(stageEnds(r.stdout)).toMatchObject({ a: 'succeeded', b: 'succeeded' });
  });

  it('run through watch - the socket is owner-only, and a folder others may enter is not trusted', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    expect(statSync(project.path('.refinery/watch')).mode & 0o777).toBe(0o700);
    expect(statSync(project.path('.refinery/watch/sock')).mode & 0o777).toBe(0o600);
    chmodSync(project.path('.refinery/watch'), 0o777);
    const r = await runCli(['run', 'p', '--force'], { cwd: project.root });
    // Not asked: the run checks by itself and finds the project held by the watch.
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refinery watch|held|lock/i);
    expect(watcher.answered('run')).toBe(0);
  });

  it('run through watch - a reader that stops early (| head -1) ends the output, not the run, and nothing crashes', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    project.write('src/a.txt', 'h1\n');
    const { spawnSync } = await import('node:child_process');
    // A forced run prints as its stages go: several writes, most after head has gone.
    const piped = spawnSync('sh', ['-c', `"${process.execPath}" "${CLI}" run p --force -v | head -1`], {
      cwd: project.root,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true' },
    });
    expect(piped.stdout.split('\n')[0]).toMatch(/^run /);
    expect(piped.stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    await watcher.until(() => (watcher as WatchProcess).answered('run') === 1, 'the run to be answered');
    expect(watcher.stderr).toContain('answered a run (exit 0)');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('h1\nh1\n');
  });

  it('plan through watch - while the watch runs, plan checks by itself', async () => {
    project = basicProject({
      'pipelines/g.yaml': `pipeline: g
stages:
  slow: { run: "while [ ! -e gate ]; do sleep 0.05; done; cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/slow.txt } }
`,
    });
    watcher = new WatchProcess(['g'], project.root);
    await watcher.until(() => watcher?.events.some((e) => e.type === 'stage-start') ?? false, 'the slow stage to start');
    const plan = await runCli(['plan', 'g'], { cwd: project.root });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('slow');
    await watcher.until(() => watcher?.stderr.includes('a plan checks by itself: it is running g') ?? false, 'the fallback notice');
    project.write('gate', '');
    await watcher.nth(1, 'run-end');
  });
});

describe('refinery watch keeps its command runners', () => {
  it('watch - its runners are started with it, one per concurrency slot, before any change', async () => {
    project = basicProject();
    watcher = await startWatch(project, ['-j', '3']);
    // Its first run had nothing to do: every runner alive now was started ahead of a command.
    const pid = watcher.pid;
    const runners = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === pid && /runners\/runner\.(py|pl)/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'));
        } catch {
          return false;
        }
      });
    expect(runners).toHaveLength(3);
    project.write('src/a.txt', 'first edit\n');
    await watcher.nth(2, 'run-end');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('first edit\nfirst edit\n');
  });

  it('watch - one set of runners serves every run and is gone when the watch stops', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const scratch = (): string[] => {
      try {
        return readdirSync(project?.path('.refinery/staging') ?? '').filter((d) =>
          readdirSync(project?.path(`.refinery/staging/${d}`) ?? '').some((f) => f.startsWith('runner-')),
        );
      } catch {
        return [];
      }
    };
    for (let i = 0; i < 3; i += 1) {
      project.write('src/a.txt', `w${i}\n`);
      await watcher.nth(2 + i, 'run-end');
    }
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('w2\nw2\n');
    // Every run's commands went through the same runners: one folder of runner files, the watch's.
    expect(scratch()).toHaveLength(1);
    await watcher.stop();
    watcher = undefined;
    expect(scratch()).toEqual([]);
  });
});
