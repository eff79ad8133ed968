import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { WatchProcess } from '../watch/watch-process.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

const PIPELINE = 'pipeline: p\nstages:\n  a: { run: "cat src/a.txt > ${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }\n';

describe('--junit', () => {
  it('junit - a report that cannot be written is an error naming it (exit 1), not silence; the stages still ran', async () => {
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a\n', blocker: 'a file where a folder is wanted\n' });
    const r = await runCli(['run', 'p', '--junit', 'blocker/report.xml'], { cwd: project.root });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refinery: error: .*report\.xml/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('a\n');
  });

  it('junit - a relative path is from where the command was typed, also when a running watch answers it', async () => {
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a\n', 'sub/.keep': '' });
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'run-end');
    await watcher.until(() => watcher?.stderr.includes('answered by this watch') ?? false, 'the socket');
    const r = await runCli(['run', 'p', '--junit', 'report.xml'], { cwd: project.path('sub') });
    expect(r.code, r.stderr).toBe(0);
    // The watch says so after the answer went out: waited for, not raced.
    expect(await watcher.answeredTimes('run', 1)).toBe(1);
    expect(watcher.stderr).toContain('answered a run (exit 0)');
    expect(existsSync(project.path('sub/report.xml'))).toBe(true);
    expect(existsSync(project.path('report.xml'))).toBe(false);
    expect(readFileSync(project.path('sub/report.xml'), 'utf8')).toContain('<testcase classname="p" name="a"');
  });
});
