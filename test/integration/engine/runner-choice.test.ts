// Which process starts a run's commands, seen from the commands themselves: each stage writes
// the name of its shell's parent process. One `run:` stage is spawned by refinery directly;
// more go through python's runners; where no python works, Node spawns every one itself, and
// the run ends the same: the same outputs, the same failure and its message.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

let project: TempProject | undefined;

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

/** A pipeline of `count` stages, each writing its shell's parent's name (and its input's text) to its output. */
function pipeline(count: number): string {
  const stages = Array.from(
    { length: count },
    (_, i) =>
      `  s${i}: { run: "cat /proc/$PPID/comm > \${outputs.o}; cat src/in.txt >> \${outputs.o}", inputs: [src/in.txt], outputs: { o: out/s${i}.txt } }`,
  );
  return `pipeline: p\nstages:\n${stages.join('\n')}\n  bad: { run: "echo broken >&2; exit 7", outputs: { o: out/bad.txt } }\n`;
}

/** Runs `count` stages (and one that fails) with `env`: the parents' names, the stages' ends and the failure's message. */
async function runOf(count: number, env: NodeJS.ProcessEnv = {}) {
  project = tempProject({ 'pipelines/p.yaml': pipeline(count), 'src/in.txt': 'in\n' });
  const r = await runCli(['run', 'p', '-j2', '-k', '--json'], { cwd: project.root, env });
  expect(r.code).toBe(1);
  const root = project.root;
  const outputs = Array.from({ length: count }, (_, i) => readFileSync(`${root}/out/s${i}.txt`, 'utf8').split('\n'));
  const failure = events(r.stdout).find((e) => e.type === 'stage-end' && e.stage === 'bad');
  return {
    parents: new Set(outputs.map((lines) => lines[0])),
    texts: new Set(outputs.map((lines) => lines.slice(1).join('\n'))),
    ends: stageEnds(r.stdout),
    failure: { reason: failure?.reason, code: failure?.code },
  };
}

const python = systemTool('python3');

describe('the runner a run starts', () => {
  it('runner choice - a run with one command spawns it itself', async () => {
    project = tempProject({
      'pipelines/p.yaml': 'pipeline: p\nstages:\n  a: { run: "cat /proc/$PPID/comm > ${outputs.o}", outputs: { o: out/a.txt } }\n',
    });
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    expect(readFileSync(project.path('out/a.txt'), 'utf8').trim()).toBe('node');
  });

  it.skipIf(skipWithout(python))('runner choice - a run with a few commands runs them all through python, as one with many', async () => {
    for (const count of [3, 60]) expect((await runOf(count)).parents).toEqual(new Set(['python3']));
  });

  it('runner choice - without python, Node spawns every command itself, and the run ends as it does with python', async () => {
    const without = await runOf(6, { REFINERY_TEST_PYTHON: '' });
    expect(without.parents).toEqual(new Set(['node']));
    expect(without.texts).toEqual(new Set(['in\n']));
    expect(without.failure.code).toBe('command-failed');
    expect(without.failure.reason).toContain('broken');
    if (skipWithout(python)) return;
    const withPython = await runOf(6);
    expect(withPython.parents).toEqual(new Set(['python3']));
    expect({ ...withPython, parents: undefined }).toEqual({ ...without, parents: undefined });
  });
});
