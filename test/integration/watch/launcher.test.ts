import { spawn } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, type CliResult, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { WatchProcess } from './watch-process.ts';

// bin/refinery.js started as a program, as a user's shell starts node_modules/.bin/refinery:
// its `#!/usr/bin/env node` line starts Node, whose one client (src/cli/daemon/ask.ts) asks a
// watch serving the project; each test counts the answers the watch logs to tell who answered.

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

// Both sides run dist/: the watch answers only a client of its own build.
const FROM_DIST = { REFINERY_FROM_DIST: '1' };

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

function basicProject(): TempProject {
  return tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a1\n' });
}

async function startWatch(p: TempProject, env: NodeJS.ProcessEnv = FROM_DIST): Promise<WatchProcess> {
  const w = new WatchProcess(['p'], p.root, { env });
  await w.nth(1, 'run-end');
  await w.until(() => w.stderr.includes('answered by this watch'), 'the socket to be served');
  return w;
}

/** Runs bin/refinery.js as a program (no `node` in front), as a user's shell does. */
function runProgram(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', CI: 'true', ...FROM_DIST, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('the launcher (bin/refinery.js run as a program)', () => {
  it('launcher - the file is a plain Node program: its first line names node, and nothing but JavaScript follows', () => {
    const lines = readFileSync(CLI, 'utf8').split('\n');
    expect(lines[0]).toBe('#!/usr/bin/env node');
    expect(lines.slice(1).join('\n')).not.toMatch(/\bperl\b|\bexec\b|quick-client|\[ -[Sf] /);
  });

  it('launcher - with a watch running, run, plan and status are answered by the watch, as `node bin/refinery.js` is', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const program = await runProgram(['run', 'p', '--json'], project.root);
    expect({ code: program.code, stderr: program.stderr }).toEqual({ code: 0, stderr: '' });
    expect(stageEnds(program.stdout)).toEqual({ a: 'fresh', b: 'fresh', note: 'fresh' });
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    const viaNode = await runCli(['run', 'p', '--json'], { cwd: project.root, env: FROM_DIST });
    expect(stageEnds(viaNode.stdout)).toEqual(stageEnds(program.stdout));
    expect(await watcher.answeredTimes('run', 2)).toBe(2);
    for (const [n, command] of ['plan', 'status'].entries()) {
      const q = await runProgram([command, 'p'], project.root);
      const alone = await runCli([command, 'p'], { cwd: project.root, env: { ...FROM_DIST, REFINERY_NO_DAEMON: '1' } });
      expect({ command, code: q.code, stdout: q.stdout, stderr: q.stderr }).toEqual({
        command,
        code: alone.code,
        stdout: alone.stdout,
        stderr: alone.stderr,
      });
      expect(await watcher.answeredTimes(command, 1), `${command} #${n}`).toBe(1);
    }
  });

  it('launcher - arguments and output keep every character through the watch: quotes, backslashes, controls, accents, emoji', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const note = 'é "q" \\back\\ tab\there ünï 😀 $HOME `x` \u0007';
    const r = await runProgram(['run', 'p', '--param', `note=${note}`, '-v'], project.root);
    expect(r.code, r.stderr).toBe(0);
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    expect(readFileSync(project.path('out/note.txt'), 'utf8')).toBe(`${note}\n`);
    // The console view shows the pipeline's parameter as given, through the daemon's JSON lines.
    const asked = await runProgram(['plan', 'p', '--param', `note=${note}`], project.root);
    const alone = await runCli(['plan', 'p', '--param', `note=${note}`], {
      cwd: project.root,
      env: { ...FROM_DIST, REFINERY_NO_DAEMON: '1' },
    });
    expect(asked.stdout).toBe(alone.stdout);
    expect(await watcher.answeredTimes('plan', 1)).toBe(1);
  });

  it('launcher - what the watch does not serve is answered here; -C before the command still asks the watch', async () => {
    project = basicProject();
    watcher = await startWatch(project);
    const cases: Array<{ args: string[]; env?: NodeJS.ProcessEnv; out: RegExp }> = [
      { args: ['run', 'p', '--help'], out: /Usage: refinery run/ },
      { args: ['--version'], out: /^\d+\.\d+\.\d+\n$/ },
      { args: ['graph', 'p'], out: /note/ },
      // Told not to ask: checks by itself.
      { args: ['plan', 'p'], env: { REFINERY_NO_DAEMON: '1' }, out: /would run|up to date/ },
    ];
    for (const c of cases) {
      const r = await runProgram(c.args, project.root, c.env);
      expect({ args: c.args, code: r.code, stderr: r.stderr }).toEqual({ args: c.args, code: 0, stderr: '' });
      expect(r.stdout).toMatch(c.out);
    }
    expect({ run: watcher.answered('run'), plan: watcher.answered('plan') }).toEqual({ run: 0, plan: 0 });
    const elsewhere = await runProgram(['-C', project.root, 'plan', 'p'], '/');
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(await watcher.answeredTimes('plan', 1)).toBe(1);
    // A socket folder others may enter is not trusted.
    chmodSync(project.path('.refinery/watch'), 0o777);
    const open = await runProgram(['plan', 'p'], project.root);
    chmodSync(project.path('.refinery/watch'), 0o700);
    expect(open.code, open.stderr).toBe(0);
    expect(watcher.answered('plan')).toBe(1);
  });

  it('launcher - a watch of another build is not asked to answer; the command checks by itself', async () => {
    project = basicProject();
    // The watch runs the TypeScript sources: a build of its own, whatever dist/ holds.
    watcher = await startWatch(project, { REFINERY_FROM_SOURCE: '1' });
    const r = await runProgram(['plan', 'p'], project.root);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/would run|up to date/);
    expect(watcher.answered('plan')).toBe(0);
    await watcher.until(
      () => watcher?.stderr.includes('a plan checks by itself: it runs another build of refinery') ?? false,
      'the fallback notice',
    );
  });
});
