import { afterEach, describe, expect, it } from 'vitest';
import { events, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

/** run-end's counts, and the same counts made from the stage-end events. */
function countsAndEnds(stdout: string): { counts: Record<string, number>; fromEnds: Record<string, number> } {
  const list = events(stdout);
  const counts = list.find((e) => e.type === 'run-end')?.counts as Record<string, number>;
  const fromEnds: Record<string, number> = { succeeded: 0, failed: 0, fresh: 0, skipped: 0, blocked: 0, aborted: 0 };
  for (const e of list) if (e.type === 'stage-end') fromEnds[e.status as string] = (fromEnds[e.status as string] ?? 0) + 1;
  return { counts, fromEnds };
}

const LOOP_AFTER_FAILURE = `pipeline: p
stages:
  bad: { run: "exit 3", outputs: { o: out/bad } }
  rounds:
    needs: [bad]
    loop:
      max: 2
      stages:
        step: { run: "echo x > \${outputs.o}", outputs: { o: "out/\${loop.round}.txt" } }
  after: { run: "echo x > \${outputs.o}", needs: [rounds], outputs: { o: out/after } }
  other: { run: "echo x > \${outputs.o}", outputs: { o: out/other } }
`;

describe('run-end counts', () => {
  it('run-end counts - a loop blocked by a failure counts only the stages reported, with --keep-going and without', async () => {
    project = tempProject({ 'pipelines/p.yaml': LOOP_AFTER_FAILURE });
    for (const flags of [['-k'], []]) {
      const result = await runCli(['run', 'p', '--json', '-j', '1', ...flags], { cwd: project.root });
      expect(result.code, result.stderr).toBe(1);
      const { counts, fromEnds } = countsAndEnds(result.stdout);
      expect(counts, flags.join(' ')).toEqual(fromEnds);
      expect(counts.failed).toBe(1);
    }
  });
});
