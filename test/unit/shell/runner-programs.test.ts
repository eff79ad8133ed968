import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PERL_RUNNER_FILE, PYTHON_RUNNER_FILE } from '../../../src/engine/shell/runner-pool.ts';
import { PACKAGE_ROOT } from '../../../src/engine/paths/package-root.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const python = systemTool('python3');
const perl = systemTool('perl');

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

  it('runner programs - live in their own files under the package root, where src/ and dist/ both find them', () => {
    expect(PYTHON_RUNNER_FILE).toBe(path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners', 'runner.py'));
    expect(PERL_RUNNER_FILE).toBe(path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners', 'runner.pl'));
    expect(readFileSync(PYTHON_RUNNER_FILE, 'utf8')).toContain('os.posix_spawn');
    expect(readFileSync(PERL_RUNNER_FILE, 'utf8')).toContain('setpgrp');
  });

  it.skipIf(skipWithout(python))(
    'runner.py - runs JSON jobs through sh or directly, answering pid, exit code and output sizes',
    async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-py-'));
      const answers = await converse(toolPath(python), PYTHON_RUNNER_FILE, dir, [
        JSON.stringify({ s: 'echo hello; echo oops >&2; exit 3' }),
        JSON.stringify({ s: 'printf "%s" "$X"', a: ['printf', '%s', 'direct'], r: [], e: { X: 'unused' } }),
        JSON.stringify({ s: 'kill -TERM $$' }),
      ]);
      const exits = answers.filter((a) => a.startsWith('exit '));
      expect(answers.filter((a) => /^pid [1-9]\d*$/.test(a))).toHaveLength(3);
      expect(exits).toEqual(['exit 3 6 5', 'exit 0 6 0', 'exit 143 0 0']);
    },
  );

  it.skipIf(skipWithout(perl))('runner.pl - runs c and f job lines through sh, answering pid and exit code', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-pl-'));
    const script = path.join(dir, 'script.sh');
    writeFileSync(script, 'echo from-file\nexit 4\n');
    const answers = await converse(toolPath(perl), PERL_RUNNER_FILE, dir, ['cecho hello; exit 3', `f${script}`]);
    expect(answers.filter((a) => /^pid [1-9]\d*$/.test(a))).toHaveLength(2);
    expect(answers.filter((a) => a.startsWith('exit '))).toEqual(['exit 3', 'exit 4']);
    expect(readFileSync(path.join(dir, 'out'), 'utf8')).toBe('from-file\n');
  });
});
