// No program is probed before the first command: the pool starts python's runner at once and
// learns from the runner itself whether it works. These tests give the pool pythons that do
// not work here (missing, or without posix_spawn) and check that the job that was waiting for
// them still runs exactly once, through the next python or spawned directly from Node.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerPool } from '../../../src/engine/shell/runner-pool.ts';
import { RUNNER_FILE, pythonRunner, type RunnerProgram, RunnerPrograms } from '../../../src/engine/shell/runner-programs.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const python = systemTool('python3');

let dir: string;
let pool: RunnerPool | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-fallback-'));
  mkdirSync(path.join(dir, 'scratch'));
});

afterEach(() => {
  pool?.close();
  pool = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function poolOf(programs: RunnerProgram[]): { pool: RunnerPool; programs: RunnerPrograms } {
  const choice = new RunnerPrograms(programs);
  pool = new RunnerPool(dir, path.join(dir, 'scratch'), choice);
  return { pool, programs: choice };
}

// Each run appends one line naming the process that started its shell: the runner, or Node.
const JOB = 'echo "ran $PPID $(cat /proc/$PPID/comm)" >> runs.txt';

function run(p: RunnerPool, script = JOB) {
  return p.run({
    cwd: dir,
    env: process.env,
    pieces: [script],
    values: [],
    signal: new AbortController().signal,
  });
}

function runs(): string[] {
  return readFileSync(path.join(dir, 'runs.txt'), 'utf8').trimEnd().split('\n');
}

const missingPython = (): RunnerProgram => pythonRunner(path.join(dir, 'no-such-python3'));

// A python3 whose os module lacks posix_spawn (as before 3.8), running the real runner.py.
const pythonWithoutSpawn = (): RunnerProgram =>
  pythonRunner(toolPath(python), [
    '-c',
    "import os, runpy, sys; del os.posix_spawn; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
    RUNNER_FILE,
  ]);

describe('RunnerPool without a working python', () => {
  it.skipIf(skipWithout(python))(
    'RunnerPool - the first python3 missing: the job that waited for it runs once, through the next',
    async () => {
      const { pool: p, programs } = poolOf([missingPython(), pythonRunner(toolPath(python))]);
      const outcome = await run(p);
      expect(outcome).toMatchObject({ exitCode: 0, signal: null, aborted: false });
      expect(runs()).toHaveLength(1);
      expect(runs()[0]).toMatch(/^ran \d+ python3?[\d.]*$/);
      expect(programs.current()?.command).toBe(toolPath(python));
    },
  );

  it.skipIf(skipWithout(python))(
    'RunnerPool - python3 without os.posix_spawn: the job that waited for it is spawned directly, once',
    async () => {
      const { pool: p, programs } = poolOf([pythonWithoutSpawn()]);
      const outcome = await run(p);
      expect(outcome).toMatchObject({ exitCode: 0, signal: null, aborted: false });
      expect(runs()).toEqual([expect.stringMatching(new RegExp(`^ran ${process.pid} `))]);
      expect(programs.current()).toBeNull();
    },
  );

  it('RunnerPool - no python works: the job is spawned directly, once', async () => {
    const { pool: p, programs } = poolOf([missingPython()]);
    const outcome = await run(p);
    expect(outcome).toMatchObject({ exitCode: 0, signal: null, aborted: false });
    expect(runs()).toEqual([expect.stringMatching(new RegExp(`^ran ${process.pid} `))]);
    expect(programs.current()).toBeNull();
    // Later jobs go straight to a direct spawn, still once each.
    await run(p);
    expect(runs()).toHaveLength(2);
  });

  it('RunnerPool - a program that failed to start is not tried again for later jobs', async () => {
    const attempts = path.join(dir, 'attempts.txt');
    const broken = path.join(dir, 'broken-python3');
    writeFileSync(broken, `#!/bin/sh\necho tried >> '${attempts}'\nexit 1\n`, { mode: 0o755 });
    const { pool: p } = poolOf([pythonRunner(broken)]);
    await run(p);
    const outcomes = await Promise.all([run(p), run(p)]);
    expect(outcomes.map((o) => o.exitCode)).toEqual([0, 0]);
    expect(readFileSync(attempts, 'utf8')).toBe('tried\n');
    expect(runs()).toHaveLength(3);
    for (const line of runs()) expect(line).toMatch(new RegExp(`^ran ${process.pid} `));
  });
});

describe('RunnerPool with a working runner', () => {
  it.skipIf(skipWithout(python))(
    'RunnerPool - a runner that dies mid-job reports runner exited, and the job is not run again',
    async () => {
      const { pool: p } = poolOf([pythonRunner(toolPath(python))]);
      const outcome = await run(p, `${JOB}; kill -9 $PPID`);
      expect(outcome).toMatchObject({ exitCode: null, signal: 'runner exited' });
      expect(runs()).toHaveLength(1);
      expect(runs()[0]).toMatch(/ python3?[\d.]*$/);
      // The program had worked, so it is kept: the next job gets a new python runner.
      await run(p);
      expect(runs()).toHaveLength(2);
      expect(runs()[1]).toMatch(/ python3?[\d.]*$/);
    },
  );
});
