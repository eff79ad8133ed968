import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

describe('a closed output pipe', () => {
  it('run - a reader that stops early (| head -1) ends the output, not the run: no crash, exit 0, every stage done', () => {
    const stages = Array.from(
      { length: 30 },
      (_, i) => `  s${i}: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/s${i}.txt } }`,
    );
    project = tempProject({ 'pipelines/p.yaml': `pipeline: p\nstages:\n${stages.join('\n')}\n`, 'src/a.txt': 'a\n' });
    const piped = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" run p -j1 -v | head -1; echo "exit \${PIPESTATUS[0]}" >&2`], {
      cwd: project.root,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true', REFINERY_NO_DAEMON: '1' },
    });
    expect(piped.stdout.split('\n')[0]).toMatch(/^run /);
    expect(piped.stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    expect(piped.stderr).toContain('exit 0');
    for (let i = 0; i < 30; i += 1) expect(readFileSync(project.path(`out/s${i}.txt`), 'utf8')).toBe('a\n');
  });
});
