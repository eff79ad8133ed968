// Which process starts a run's commands, seen from the commands themselves: each stage writes
// the name of its shell's parent process. One `run:` stage is spawned by refinery directly; a
// few go through the runner that is ready soonest (perl); many through python's runner, whose
// commands start cheapest.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

let project: TempProject | undefined;

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

/** A pipeline of `count` independent stages, each writing its shell's parent's name. */
function pipeline(count: number): string {
  const stages = Array.from(
    { length: count },
    (_, i) => `  s${i}: { run: "cat /proc/$PPID/comm > \${outputs.o}", outputs: { o: out/s${i}.txt } }`,
  );
  return `pipeline: p\nstages:\n${stages.join('\n')}\n`;
}

async function parentsOf(count: number): Promise<Set<string>> {
  project = tempProject({ 'pipelines/p.yaml': pipeline(count) });
  const r = await runCli(['run', 'p', '-j2'], { cwd: project.root });
  expect(r.code).toBe(0);
  const root = project.root;
  return new Set(Array.from({ length: count }, (_, i) => readFileSync(`${root}/out/s${i}.txt`, 'utf8').trim()));
}

const python = systemTool('python3');
const perl = systemTool('perl');

describe.skipIf(skipWithout(python, perl))('the runner a run starts', () => {
  it('runner choice - a run with one command spawns it itself', async () => {
    expect(await parentsOf(1)).toEqual(new Set(['node']));
  });

  it('runner choice - a run with a few commands runs them all through perl, the first included', async () => {
    expect(await parentsOf(6)).toEqual(new Set(['perl']));
  });

  it('runner choice - a run with many commands runs them through python', async () => {
    expect(await parentsOf(60)).toEqual(new Set(['python3']));
  });
});
