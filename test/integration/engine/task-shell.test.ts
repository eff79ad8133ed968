// `ctx.$` (zx's $) in a task of a test project, through the real CLI.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { events, runCli, stageEnds, startCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const TASK = `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';
export default defineTask({
  name: 'shell-probe',
  params: z.object({ mode: z.string() }),
  async run(ctx) {
    const $ = ctx.$;
    const out = ctx.outputs.o;
    switch (ctx.params.mode) {
      case 'args': {
        const weird = ["it's", '$(touch pwned)', 'a\\nb', '*.txt', '\`touch pwned2\`', ''];
        const printed = await $\`printf '%s\\\\0' \${weird}\`;
        const cwd = (await $\`pwd\`).stdout.trim();
        await writeFile(out, JSON.stringify({ args: printed.stdout.split('\\0').slice(0, -1), expected: weird, cwd }));
        return;
      }
      case 'fail':
        await $\`sh -c \${'echo boom >&2; exit 3'}\`;
        return;
      case 'nothrow': {
        const r = await $\`sh -c \${'exit 4'}\`.nothrow();
        await writeFile(out, JSON.stringify({ code: r.exitCode }));
        return;
      }
      case 'lines':
        await $\`printf 'one\\ntwo\\n'\`;
        await $\`sh -c \${'echo err-line >&2'}\`;
        await writeFile(out, '{}');
        return;
      case 'sleep':
        // A grandchild: the shell starts sleep in the background and waits for it.
        await $\`sh -c \${'sleep 300 & echo $! > sleep.pid; echo started; wait'}\`;
        return;
    }
  },
});
`;

function project1(stage: string): TempProject {
  return tempProject({ 'tasks/shell-probe.ts': TASK, 'hello.txt': 'x', 'pipelines/p.yaml': `pipeline: p\nstages:\n${stage}` });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A killed process is reaped within moments; this bounds the wait instead of sleeping. */
async function gone(pid: number): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return !alive(pid);
}

describe('ctx.$ in tasks', () => {
  it('ctx.$ - quotes, $(...), backquotes, newlines, globs and empty strings are passed as single arguments, in the project root', async () => {
    project = project1('  s: { task: shell-probe, with: { mode: args }, outputs: { o: out/args.json } }\n');
    const run = await runCli(['run', 'p'], { cwd: project.root });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(project.path('out/args.json'), 'utf8')) as { args: string[]; expected: string[]; cwd: string };
    expect(result.args).toEqual(result.expected);
    expect(realpathSync(result.cwd)).toBe(realpathSync(project.root));
    expect(existsSync(project.path('pwned'))).toBe(false);
    expect(existsSync(project.path('pwned2'))).toBe(false);
  });

  it('ctx.$ - a failing command fails the stage with the command and its exit code', async () => {
    project = project1('  s: { task: shell-probe, with: { mode: fail }, outputs: { o: out/x.json } }\n');
    const run = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(run.code).toBe(1);
    const end = events(run.stdout).find((e) => e.type === 'stage-end' && e.stage === 's');
    expect(end).toMatchObject({ status: 'failed', code: 'command-failed' });
    expect(String(end?.reason)).toContain('exit code 3');
    expect(String(end?.reason)).toContain('sh -c');
    expect(String(end?.reason)).toContain('boom');
  });

  it('ctx.$ - nothrow gives the exit code instead of failing', async () => {
    project = project1('  s: { task: shell-probe, with: { mode: nothrow }, outputs: { o: out/n.json } }\n');
    const run = await runCli(['run', 'p'], { cwd: project.root });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(readFileSync(project.path('out/n.json'), 'utf8'))).toEqual({ code: 4 });
  });

  it("ctx.$ - a command's output lines reach the stage's log events", async () => {
    project = project1('  s: { task: shell-probe, with: { mode: lines }, outputs: { o: out/l.json } }\n');
    const run = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const logs = events(run.stdout)
      .filter((e) => e.type === 'stage-log' && e.stage === 's')
      .map((e) => [e.stream, e.message]);
    expect(logs).toEqual(
      expect.arrayContaining([
        ['stdout', 'one'],
        ['stdout', 'two'],
        ['stderr', 'err-line'],
      ]),
    );
  });

  it("ctx.$ - the stage's timeout kills the command and its children", async () => {
    project = project1('  s: { task: shell-probe, with: { mode: sleep }, timeout: 2s, outputs: { o: out/s.json } }\n');
    const run = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(run.code).toBe(1);
    expect(stageEnds(run.stdout).s).toBe('failed');
    const pid = Number(readFileSync(project.path('sleep.pid'), 'utf8'));
    expect(await gone(pid)).toBe(true);
  });

  it('ctx.$ - Ctrl-C kills the command and its children', async () => {
    project = project1('  s: { task: shell-probe, with: { mode: sleep }, outputs: { o: out/s.json } }\n');
    const child = startCli(['run', 'p', '--json'], { cwd: project.root });
    let out = '';
    let sent = false;
    const code = await new Promise<number | null>((resolve) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (!sent && events(out).some((e) => e.type === 'stage-log' && e.message === 'started')) {
          sent = true;
          child.kill('SIGINT');
        }
      });
      child.on('close', (c) => resolve(c));
    });
    expect(code).toBe(130);
    const pid = Number(readFileSync(project.path('sleep.pid'), 'utf8'));
    expect(await gone(pid)).toBe(true);
  });
});
