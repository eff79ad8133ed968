import { existsSync, readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

describe('refinery status', () => {
  it('status - the plan record beside the stage journals is neither listed as a pipeline nor set aside as damaged', async () => {
    project = tempProject({
      'pipelines/p.yaml':
        'pipeline: p\nstages:\n  a: { run: "cat src/a.txt > ${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }\n',
      'src/a.txt': 'a\n',
    });
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    const planRecords = (): string[] => readdirSync(project?.path('.refinery/state') ?? '').filter((f) => f.startsWith('plan-'));
    expect(planRecords()).toHaveLength(1);
    const status = await runCli(['status'], { cwd: project.root });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Pipeline p: 1 stage');
    expect(status.stdout).not.toContain('Pipeline plan-');
    expect(status.stderr).toBe('');
    expect(planRecords()).toHaveLength(1);
    expect(planRecords()[0]).toMatch(/^plan-[0-9a-f]{16}\.jsonl$/);
    expect(existsSync(project.path(`.refinery/state/${planRecords()[0]}`))).toBe(true);
  });
});
