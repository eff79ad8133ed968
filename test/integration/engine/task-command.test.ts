import { existsSync, readFileSync } from 'node:fs';
import { WatchProcess } from '../watch/watch-process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

describe('refinery task', () => {
  it('refinery task - a one-stage run through the executor: the events of a pipeline run, and it runs again every time', async () => {
    project = demoProject();
    const args = ['task', 'copy-json', '--param', 'from=src/a.txt', '--output', 'report=out/alone.json', '--json'];
    for (const pass of [1, 2]) {
      const result = await runCli(args, { cwd: project.root });
      expect(result.code, result.stderr).toBe(0);
      const list = events(result.stdout);
      expect(
        list.map((e) => e.type),
        `pass ${pass}`,
      ).toEqual(['run-start', 'stage-start', 'stage-end', 'run-end']);
      expect(list[0]).toMatchObject({ pipeline: 'task-copy-json', stages: 1, params: { from: 'src/a.txt' }, concurrency: 1 });
      expect(list[1]).toMatchObject({ stage: 'task:copy-json', attempt: 1, reason: 'run by hand' });
      expect(list[2]).toMatchObject({
        stage: 'task:copy-json',
        status: 'succeeded',
        attempts: 1,
        summary: 'copied',
        outputs: { report: 'out/alone.json' },
      });
      expect(list[3]).toMatchObject({ status: 'succeeded', counts: { succeeded: 1, failed: 0, fresh: 0 } });
    }
    expect(JSON.parse(readFileSync(project.path('out/alone.json'), 'utf8'))).toEqual({ lines: ['alpha'] });
  });

  it('refinery task - a failing task fails its one stage with exit 1 and failed counts', async () => {
    project = demoProject();
    const result = await runCli(['task', 'copy-json', '--param', 'from=src/missing.txt', '--output', 'report=out/alone.json', '--json'], {
      cwd: project.root,
    });
    expect(result.code).toBe(1);
    const list = events(result.stdout);
    expect(list.find((e) => e.type === 'stage-end')).toMatchObject({ status: 'failed', reason: expect.stringContaining('missing.txt') });
    expect(list.find((e) => e.type === 'run-end')).toMatchObject({ status: 'failed', counts: { failed: 1, succeeded: 0 } });
  });

  it('refinery task - while another refinery holds the project (a watch), it is refused, naming the holder, and writes nothing', async () => {
    project = demoProject();
    const watch = new WatchProcess(['demo'], project.root);
    try {
      await watch.nth(1, 'run-end');
      const result = await runCli(['task', 'copy-json', '--param', 'from=src/a.txt', '--output', 'report=out/held.json'], {
        cwd: project.root,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`pid ${watch.pid}`);
      expect(existsSync(project.path('out/held.json'))).toBe(false);
    } finally {
      await watch.stop();
    }
    const after = await runCli(['task', 'copy-json', '--param', 'from=src/a.txt', '--output', 'report=out/held.json'], {
      cwd: project.root,
    });
    expect(after.code, after.stderr).toBe(0);
    expect(existsSync(project.path('out/held.json'))).toBe(true);
  });
});
