// A run of many `run:` stages keeps its -j through the runners' jobserver, with as many stages
// again waiting in runners (commandLookahead): the commands still never run more than -j at
// once, events and outcomes read as before, and a failure that stops the run lets none of the
// waiting stages start.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { events, interruptOnceItPrints, runCli, stageEnds, startCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { commandLog, mostAtOnce } from '../../helpers/command-log.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

const python = systemTool('python3');

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

/** 45 independent stages (more than a run whose runners start quickly: python's runners). */
function pipeline(command: (i: number) => string, extra = ''): string {
  const lines = ['pipeline: many', 'stages:'];
  for (let i = 0; i < 45; i += 1) lines.push(`  s${i}: { run: ${JSON.stringify(command(i))}, outputs: { o: out/s${i} }${extra} }`);
  return `${lines.join('\n')}\n`;
}

/** Each command logs `+ RUNNER_PID NAME` as it starts and `- NAME` as it ends (one O_APPEND line each). */
const logged = (i: number, tail: string): string => `echo "+ $PPID s${i}" >> log; sleep 0.05; echo "- s${i}" >> log; ${tail}`;

function logLines(p: TempProject): string[] {
  return commandLog(p.path('log'));
}

/** Processes whose working folder is `dir` (from /proc). */
function processesIn(dir: string): number {
  let count = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) === dir) count += 1;
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return count;
}

describe.skipIf(skipWithout(python))('refinery run through the jobserver', () => {
  it('refinery run - 45 commands at -j2: four runners hold them, never more than two run at once', async () => {
    project = tempProject({ 'pipelines/many.yaml': pipeline((i) => logged(i, `echo ${i} > \${outputs.o}`)) });
    const r = await runCli(['run', 'many', '-j', '2', '--json'], { cwd: project.root });
    expect(r.code).toBe(0);
    const lines = logLines(project);
    expect(lines.filter((l) => l.startsWith('+'))).toHaveLength(45);
    expect(mostAtOnce(lines)).toBe(2);
    // Twice -j runners: two running, two holding the next stages.
    expect(new Set(lines.filter((l) => l.startsWith('+')).map((l) => l.split(' ')[1])).size).toBe(4);
    const all = events(r.stdout);
    expect(all.filter((e) => e.type === 'stage-start')).toHaveLength(45);
    expect(Object.values(stageEnds(r.stdout)).every((s) => s === 'succeeded')).toBe(true);
    expect(readFileSync(project.path('out/s44'), 'utf8')).toBe('44\n');
  });

  it('refinery run - a failure stops the run: stages waiting in runners end not started, their commands never run', async () => {
    project = tempProject({ 'pipelines/many.yaml': pipeline((i) => logged(i, 'exit 1')) });
    const r = await runCli(['run', 'many', '-j', '2', '--json'], { cwd: project.root });
    expect(r.code).toBe(1);
    // The ones that started (two, or one where the first failed before the second was spawned)
    // fail; the ones that waited in runners and the rest never start.
    const ran = logLines(project)
      .filter((l) => l.startsWith('+'))
      .map((l) => l.split(' ')[2]);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    expect(ran.length).toBeLessThanOrEqual(2);
    const all = events(r.stdout);
    expect(all.filter((e) => e.type === 'stage-start').map((e) => e.stage)).toEqual(expect.arrayContaining(ran));
    expect(all.filter((e) => e.type === 'stage-start')).toHaveLength(ran.length);
    const ends = all.filter((e) => e.type === 'stage-end');
    expect(ends.filter((e) => e.status === 'failed').map((e) => e.stage)).toEqual(expect.arrayContaining(ran));
    const notStarted = ends.filter((e) => e.status === 'blocked');
    expect(notStarted).toHaveLength(45 - ran.length);
    for (const e of notStarted) expect(e).toMatchObject({ code: 'stopped-after-failure', attempts: 0 });
  });

  it('refinery run - Ctrl-C while stages wait in runners: the running commands are stopped, the waiting ones never start', async () => {
    project = tempProject({ 'pipelines/many.yaml': pipeline((i) => `echo "+ $PPID s${i}" >> log; sleep 30; echo ${i} > \${outputs.o}`) });
    const child = startCli(['run', 'many', '-j', '2', '--json'], { cwd: project.root });
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    expect(await interruptOnceItPrints(child, '"stage-start"')).toBe(130);
    const started = events(stdout).filter((e) => e.type === 'stage-start');
    const ran = logLines(project).filter((l) => l.startsWith('+'));
    expect(ran.length).toBeLessThanOrEqual(2);
    expect(ran).toHaveLength(started.length);
    const ends = events(stdout).filter((e) => e.type === 'stage-end');
    expect(ends.filter((e) => e.status === 'aborted').length).toBeGreaterThanOrEqual(2);
    // The killed commands' processes (sh and sleep) are gone; none was left running.
    const root = project.root;
    await vi.waitFor(() => expect(processesIn(root)).toBe(0), { timeout: 10_000, interval: 20 });
  });

  it('refinery run - with a stage timeout, stages keep their slots as before (no stage waits in a runner)', async () => {
    project = tempProject({ 'pipelines/many.yaml': pipeline((i) => logged(i, `echo ${i} > \${outputs.o}`), ', timeout: 60s') });
    const r = await runCli(['run', 'many', '-j', '2', '--json'], { cwd: project.root });
    expect(r.code).toBe(0);
    const lines = logLines(project);
    expect(mostAtOnce(lines)).toBe(2);
    expect(new Set(lines.filter((l) => l.startsWith('+')).map((l) => l.split(' ')[1])).size).toBe(2);
  });
});
