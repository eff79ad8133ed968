import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type CliResult, interruptOnceItPrints, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';
import { WatchProcess } from './watch-process.ts';

// bin/refinery.js run as a program: /bin/sh reads its first line and, with a watch serving in
// the working folder, starts bin/quick-client.pl (perl) instead of Node. A `node` first in PATH
// writes a line to a file whenever it starts, so each test can tell which client answered.

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;
let shim: string;
let startsLog: string;

// Both sides run dist/ (built by `npm test`): the quick client serves only the build the watch runs.
const FROM_DIST = { REFINERY_FROM_DIST: '1' };

beforeAll(() => {
  shim = mkdtempSync(path.join(os.tmpdir(), 'refinery-node-shim-'));
  startsLog = path.join(shim, 'starts.log');
  writeFileSync(path.join(shim, 'node'), `#!/bin/sh\necho "$*" >> '${startsLog}'\nexec '${process.execPath}' "$@"\n`);
  chmodSync(path.join(shim, 'node'), 0o755);
});

afterAll(() => rmSync(shim, { recursive: true, force: true }));

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

const PIPELINE = `pipeline: p
params:
  note: { type: string, default: "-" }
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  b: { run: "cat out/a.txt out/a.txt > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }
  note: { run: "printf '%s\\\\n' \${params.note} > \${outputs.o}", outputs: { o: out/note.txt } }
`;

const FAILING = 'pipeline: f\nstages:\n  bad: { run: "echo nope >&2; exit 3", outputs: { o: out/bad.txt } }\n';

function basicProject(): TempProject {
  return tempProject({ 'pipelines/p.yaml': PIPELINE, 'pipelines/f.yaml': FAILING, 'src/a.txt': 'a1\n' });
}

async function startWatch(p: TempProject, args: string[] = ['p'], env: NodeJS.ProcessEnv = FROM_DIST): Promise<WatchProcess> {
  const w = new WatchProcess(args, p.root, { env });
  await w.nth(1, 'run-end');
  await w.until(() => w.stderr.includes('answered by this watch'), 'the socket to be served');
  return w;
}

function startQuick(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  rmSync(startsLog, { force: true });
  return spawn(CLI, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', CI: 'true', ...FROM_DIST, PATH: `${shim}${path.delimiter}${process.env.PATH}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs bin/refinery.js as a program; `node`: whether Node was started on the way. */
function runQuick(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult & { node: boolean }> {
  return new Promise((resolve, reject) => {
    const child = startQuick(args, cwd, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, node: existsSync(startsLog) }));
  });
}

const perl = systemTool('perl');

describe.skipIf(skipWithout(perl))('the quick client (bin/quick-client.pl)', () => {
  it('quick client - a no-op through the watch is answered without starting Node, as Node’s client answers it', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const quick = await runQuick(['run', 'p', '--json'], project.root);
    expect(quick.node).toBe(false);
    expect(quick.stderr).toBe('');
    expect(quick.code).toBe(0);
    expect(stageEnds(quick.stdout)).toEqual({ a: 'fresh', b: 'fresh', note: 'fresh' });
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    const viaNode = await runCli(['run', 'p', '--json'], { cwd: project.root, env: FROM_DIST });
    expect(stageEnds(viaNode.stdout)).toEqual(stageEnds(quick.stdout));
    expect(await watcher.answeredTimes('run', 2)).toBe(2);
    for (const command of ['plan', 'status']) {
      const q = await runQuick([command, 'p'], project.root);
      const n = await runCli([command, 'p'], { cwd: project.root, env: FROM_DIST });
      expect({ command, node: q.node, code: q.code, stdout: q.stdout, stderr: q.stderr }).toEqual({
        command,
        node: false,
        code: n.code,
        stdout: n.stdout,
        stderr: n.stderr,
      });
    }
  });

  it('quick client - a file written just before the run is rebuilt before the answer', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    for (let i = 0; i < 8; i += 1) {
      project.write('src/a.txt', `v${i}\n`);
      const r = await runQuick(['run', 'p'], project.root);
      expect({ code: r.code, node: r.node }).toEqual({ code: 0, node: false });
      expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe(`v${i}\nv${i}\n`);
    }
    expect(await watcher.answeredTimes('run', 8)).toBe(8);
  });

  it('quick client - exit codes and messages are the run’s: a failing stage 1, a wrong argument 2', async () => {
    project = basicProject();
    watcher = await startWatch(project, ['p', 'f']);
    const failing = await runQuick(['run', 'f', '--json'], project.root);
    expect({ code: failing.code, node: failing.node }).toEqual({ code: 1, node: false });
    expect(stageEnds(failing.stdout)).toEqual({ bad: 'failed' });
    const wrong = await runQuick(['run', 'p', '--param', 'nope=1'], project.root);
    expect({ code: wrong.code, node: wrong.node }).toEqual({ code: 2, node: false });
    const alone = await runCli(['run', 'p', '--param', 'nope=1'], { cwd: project.root, env: { ...FROM_DIST, REFINERY_NO_DAEMON: '1' } });
    expect(wrong.stderr).toBe(alone.stderr);
  });

  it('quick client - arguments and output keep every character: quotes, backslashes, controls, accents, emoji', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const note = 'é "q" \\back\\ tab\there ünï 😀 $HOME `x` \u0007';
    const r = await runQuick(['run', 'p', '--param', `note=${note}`, '-v'], project.root);
    expect({ code: r.code, node: r.node }).toEqual({ code: 0, node: false });
    expect(readFileSync(project.path('out/note.txt'), 'utf8')).toBe(`${note}\n`);
    // The console view shows the pipeline's parameter as given, through the daemon's JSON lines.
    const n = await runCli(['plan', 'p', '--param', `note=${note}`], { cwd: project.root, env: FROM_DIST });
    const q = await runQuick(['plan', 'p', '--param', `note=${note}`], project.root);
    expect(q.stdout).toBe(n.stdout);
  });

  it('quick client - Ctrl-C aborts the run it asked for (130); the watch goes on', async () => {
    project = tempProject({
      'pipelines/g.yaml': `pipeline: g
stages:
  slow: { run: "while [ ! -e gate ]; do sleep 0.05; done; echo done > \${outputs.o}", outputs: { o: out/slow.txt } }
`,
      gate: '',
    });
    watcher = await startWatch(project, ['g']);
    rmSync(project.path('gate'));
    const child = startQuick(['run', 'g', '--force', '--json'], project.root);
    expect(await interruptOnceItPrints(child, '"stage-start"')).toBe(130);
    await watcher.until(() => (watcher as WatchProcess).answered('run') === 1, 'the run to be answered');
    expect(watcher.stderr).toContain('answered a run (exit 130)');
    expect(existsSync(startsLog)).toBe(false);
    project.write('gate', '');
    const again = await runQuick(['run', 'g', '--json'], project.root);
    expect({ code: again.code, node: again.node }).toEqual({ code: 0, node: false });
    expect(stageEnds(again.stdout)).toEqual({ slow: 'succeeded' });
  });

  it('quick client - a reader that stops early (| head -1) ends the output, not the run', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    project.write('src/a.txt', 'h1\n');
    const piped = spawnSync('sh', ['-c', `"${CLI}" run p --force -v | head -1`], {
      cwd: project.root,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true', ...FROM_DIST },
    });
    expect(piped.stdout.split('\n')[0]).toMatch(/^run /);
    expect(piped.stderr).toBe('');
    await watcher.until(() => (watcher as WatchProcess).answered('run') === 1, 'the run to be answered');
    expect(watcher.stderr).toContain('answered a run (exit 0)');
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('h1\nh1\n');
  });

  it('quick client - hands to Node what it does not serve, which then answers as always', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const cases: Array<{ args: string[]; env?: NodeJS.ProcessEnv; code: number; out: RegExp }> = [
      // A flag before the command: Node reads it.
      { args: ['-C', '.', 'plan', 'p'], code: 0, out: /would run/ },
      { args: ['run', 'p', '--help'], code: 0, out: /Usage: refinery run/ },
      { args: ['--version'], code: 0, out: /^\d+\.\d+\.\d+\n$/ },
      { args: ['graph', 'p'], code: 0, out: /note/ },
      // Told not to ask: Node checks by itself.
      { args: ['plan', 'p'], env: { REFINERY_NO_DAEMON: '1' }, code: 0, out: /would run/ },
    ];
    for (const c of cases) {
      const r = await runQuick(c.args, project.root, c.env);
      expect({ args: c.args, code: r.code, node: r.node, stderr: r.stderr }).toEqual({
        args: c.args,
        code: c.code,
        node: true,
        stderr: '',
      });
      expect(r.stdout).toMatch(c.out);
    }
    // Node's client asked the watch for the plan after -C (the quick client leaves -C to it).
    expect(await watcher.answeredTimes('plan', 1)).toBe(1);
    // A socket folder others may enter is not trusted by either client.
    chmodSync(project.path('.refinery/watch'), 0o777);
    const open = await runQuick(['plan', 'p'], project.root);
    expect({ code: open.code, node: open.node }).toEqual({ code: 0, node: true });
    chmodSync(project.path('.refinery/watch'), 0o700);
    expect(await watcher.answeredTimes('plan', 1)).toBe(1);
    // No watch: the shell starts Node at once.
    await watcher.stop();
    watcher = undefined;
    const alone = await runQuick(['run', 'p', '--json'], project.root);
    expect({ code: alone.code, node: alone.node }).toEqual({ code: 0, node: true });
    expect(stageEnds(alone.stdout)).toEqual({ a: 'fresh', b: 'fresh', note: 'fresh' });
  });

  it('quick client - a watch of another build is not asked to answer; Node checks by itself', async () => {
    project = basicProject();
    // The watch runs the TypeScript sources: a build of its own, whatever dist/ holds.
    watcher = await startWatch(project, ['p'], { REFINERY_FROM_SOURCE: '1' });
    const r = await runQuick(['plan', 'p'], project.root);
    expect({ code: r.code, node: r.node }).toEqual({ code: 0, node: true });
    expect(r.stdout).toContain('would run');
    expect(watcher.answered('plan')).toBe(0);
    await watcher.until(
      () => watcher?.stderr.includes('a plan checks by itself: it runs another build of refinery') ?? false,
      'the fallback notice',
    );
  });
});
