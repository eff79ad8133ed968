import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { machinePythons, RUNNER_FILE } from '../../../src/engine/shell/runner-programs.ts';
import { PACKAGE_ROOT } from '../../../src/engine/paths/package-root.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const python = systemTool('python3');

/** Starts a runner program, sends each job line, and collects its answer lines until every job has exited. */
async function converse(command: string, file: string, dir: string, jobs: string[]): Promise<string[]> {
  const child = spawn(command, [file, path.join(dir, 'out'), path.join(dir, 'err')], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: string[] = [];
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        answers.push(line);
        const exits = answers.filter((a) => a.startsWith('exit ')).length;
        if (exits < jobs.length && line.startsWith('exit ')) child.stdin.write(`${jobs[exits]}\n`);
        if (exits === jobs.length) resolve();
      }
    });
    child.stdin.write(`${jobs[0]}\n`);
  });
  child.stdin.end();
  return answers;
}

describe('runner programs', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runner program - lives in its own file under the package root, where src/ and dist/ both find it', () => {
    expect(RUNNER_FILE).toBe(path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners', 'runner.py'));
    expect(readFileSync(RUNNER_FILE, 'utf8')).toContain('os.posix_spawn');
  });

  it('runner program - the system python first, then python3 from PATH; the test override names one, or none', () => {
    expect(machinePythons({}).map((p) => p.command)).toEqual(['/usr/bin/python3', 'python3']);
    expect(machinePythons({ REFINERY_TEST_PYTHON: '/opt/py/bin/python3' }).map((p) => p.command)).toEqual(['/opt/py/bin/python3']);
    expect(machinePythons({ REFINERY_TEST_PYTHON: '' })).toEqual([]);
  });

  it.skipIf(skipWithout(python))(
    'runner.py - runs JSON jobs through sh or directly, answering pid, exit code and output sizes',
    async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-py-'));
      const answers = await converse(toolPath(python), RUNNER_FILE, dir, [
        JSON.stringify({ s: 'echo hello; echo oops >&2; exit 3' }),
        JSON.stringify({ s: 'printf "%s" "$X"', a: ['printf', '%s', 'direct'], r: [], e: { X: 'unused' } }),
        JSON.stringify({ s: 'kill -TERM $$' }),
      ]);
      const exits = answers.filter((a) => a.startsWith('exit '));
      // `ready` comes before anything else: the pool knows a runner that ends without it read no job.
      expect(answers[0]).toBe('ready');
      expect(answers.filter((a) => /^pid [1-9]\d*$/.test(a))).toHaveLength(3);
      expect(exits).toEqual(['exit 3 6 5', 'exit 0 6 0', 'exit 143 0 0']);
    },
  );

  it.skipIf(skipWithout(python))(
    'runner.py - without os.posix_spawn it exits before saying ready, leaving the job it was sent unread',
    async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-py-'));
      // A Python whose os module lacks posix_spawn, as before 3.8, running the real runner.py.
      const withoutSpawn =
        "import os, runpy, sys; del os.posix_spawn; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')";
      const child = spawn(toolPath(python), ['-c', withoutSpawn, RUNNER_FILE, path.join(dir, 'out'), path.join(dir, 'err')], {
        cwd: dir,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stdin.on('error', () => {});
      // A direct job: posix_spawnp, which such a Python may still have, would start it.
      child.stdin.write(`${JSON.stringify({ s: 'touch ran', a: ['touch', 'ran'], r: [] })}\n`);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stdout).toBe('');
      expect(code).not.toBe(0);
      expect(existsSync(path.join(dir, 'ran'))).toBe(false);
    },
  );
});
