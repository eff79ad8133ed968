import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunnerPool } from '../../../src/engine/shell/runner-pool.ts';
import { pythonRunner, RunnerPrograms } from '../../../src/engine/shell/runner-programs.ts';
import { parseSimpleCommand } from '../../../src/engine/shell/simple-command.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

let base: string;
let pool: RunnerPool;
let poolDir: string;

const python = systemTool('python3');

// Python's runners, and the pool where no python works (each command spawned from Node): both
// must start commands exactly as sh would.
const PROGRAMS = [
  { name: 'python', skip: skipWithout(python), programs: () => new RunnerPrograms([pythonRunner(toolPath(python))]) },
  { name: 'no python', skip: false, programs: () => new RunnerPrograms([]) },
];

/** Fresh files in `dir`; the folder itself stays (the runners' working directory is the pool's). */
function seed(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) if (name !== 'scratch') rmSync(path.join(dir, name), { recursive: true, force: true });
  writeFileSync(path.join(dir, 'a.txt'), 'alpha\n');
  writeFileSync(path.join(dir, 'b.txt'), 'beta\nbeta\n');
  writeFileSync(path.join(dir, 'log.txt'), 'first\n');
}

/** Every file of a folder with its content, scratch files left out. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) if (name !== 'scratch') out[name] = readFileSync(path.join(dir, name), 'utf8');
  return out;
}

function runInPool(script: string, env: NodeJS.ProcessEnv = process.env, signal = new AbortController().signal) {
  return pool.run({ cwd: poolDir, env, pieces: [script], values: [], signal });
}

// Commands the pool starts without a shell, and commands it gives to sh: the files they leave
// and their exit codes must match what `sh -c` does with the same script.
const SCRIPTS = [
  'cksum a.txt b.txt > out.txt',
  'wc -l < b.txt > count.txt',
  'cat a.txt >> log.txt',
  'cat missing.txt > out.txt',
  'no-such-program-refinery a.txt > out.txt',
  'cat a.txt > no-such-dir/out.txt',
  'sort < missing.txt > sorted.txt',
  "sh -c 'exit 3'",
  'cat a.txt b.txt 2> err.txt > both.txt',
  'cat a.txt | tr a-z A-Z > upper.txt',
  'echo "$((1 + 2))" > sum.txt',
];

describe.each(PROGRAMS)('RunnerPool with $name', ({ name, skip, programs }) => {
  beforeAll(() => {
    if (skip) return;
    base = mkdtempSync(path.join(os.tmpdir(), 'refinery-runners-'));
    poolDir = path.join(base, 'pool');
    mkdirSync(path.join(poolDir, 'scratch'), { recursive: true });
    pool = new RunnerPool(poolDir, path.join(poolDir, 'scratch'), programs());
  });

  afterAll(() => {
    if (skip) return;
    pool.close();
    rmSync(base, { recursive: true, force: true });
  });

  for (const script of SCRIPTS) {
    it.skipIf(skip)(
      `RunnerPool (${name}) - ${JSON.stringify(script)} leaves what sh -c leaves${parseSimpleCommand(script) ? ' (started directly)' : ''}`,
      async () => {
        const shellDir = path.join(base, 'sh');
        seed(shellDir);
        seed(poolDir);
        const expected = spawnSync('/bin/sh', ['-c', script], { cwd: shellDir, stdio: ['ignore', 'pipe', 'pipe'] });
        const outcome = await runInPool(script);
        expect(outcome.exitCode).toBe(expected.status);
        expect(snapshot(poolDir)).toEqual(snapshot(shellDir));
        expect(outcome.tail !== '').toBe(expected.stderr.length + expected.stdout.length > 0);
      },
    );
  }

  it.skipIf(skip)(`RunnerPool (${name}) - a direct command sees the variables set for it and not those removed`, async () => {
    seed(poolDir);
    const env = { ...process.env, REFINERY_TEST_VALUE: 'x y' } as NodeJS.ProcessEnv;
    delete env.HOME;
    expect(parseSimpleCommand('printenv REFINERY_TEST_VALUE HOME > env.txt')).toBeDefined();
    const outcome = await runInPool('printenv REFINERY_TEST_VALUE HOME > env.txt', env);
    // printenv exits 1 when one of the names is not set.
    expect(outcome.exitCode).toBe(1);
    expect(readFileSync(path.join(poolDir, 'env.txt'), 'utf8')).toBe('x y\n');
  });

  it.skipIf(skip)(`RunnerPool (${name}) - a command run with another PATH runs the program sh would find there`, async () => {
    seed(poolDir);
    mkdirSync(path.join(poolDir, 'bin'));
    // A cksum earlier in the stage's PATH than the system one.
    writeFileSync(path.join(poolDir, 'bin', 'cksum'), '#!/bin/sh\necho shadowed\n', { mode: 0o755 });
    const env = { ...process.env, PATH: `${path.join(poolDir, 'bin')}:${process.env.PATH ?? ''}` };
    const outcome = await runInPool('cksum a.txt > sum.txt', env);
    expect(outcome.exitCode).toBe(0);
    expect(readFileSync(path.join(poolDir, 'sum.txt'), 'utf8')).toBe('shadowed\n');
  });

  it.skipIf(skip)(`RunnerPool (${name}) - output of a direct command reaches the caller line by line`, async () => {
    const lines: string[] = [];
    const outcome = await pool.run({
      cwd: poolDir,
      env: process.env,
      pieces: ['cat a.txt b.txt'],
      values: [],
      signal: new AbortController().signal,
      onLine: (stream, line) => lines.push(`${stream}:${line}`),
    });
    expect(outcome.exitCode).toBe(0);
    expect(lines).toEqual(['stdout:alpha', 'stdout:beta', 'stdout:beta']);
    // The next command starts with empty output files.
    const next: string[] = [];
    await pool.run({
      cwd: poolDir,
      env: process.env,
      pieces: ['true'],
      values: [],
      signal: new AbortController().signal,
      onLine: (_, l) => next.push(l),
    });
    expect(next).toEqual([]);
  });

  it.skipIf(skip)(`RunnerPool (${name}) - abort kills a direct command and its process group`, async () => {
    const controller = new AbortController();
    const pending = runInPool('sleep 30', process.env, controller.signal);
    // The command is running once the runner has reported its pid; aborting before is handled too.
    controller.abort();
    const outcome = await pending;
    expect(outcome.aborted).toBe(true);
    expect(outcome.exitCode).toBe(null);
    // Ended by the polite signal: the group existed when it was sent (no wait for SIGKILL).
    expect(outcome.signal).toBe('SIGTERM');
  });

  it.skipIf(skip)(`RunnerPool (${name}) - a long multi-line script runs through sh`, async () => {
    seed(poolDir);
    const script = `for i in 1 2 3; do\n  echo $i >> lines.txt\ndone\n# ${'x'.repeat(20_000)}`;
    const outcome = await runInPool(script);
    expect(outcome.exitCode).toBe(0);
    expect(readFileSync(path.join(poolDir, 'lines.txt'), 'utf8')).toBe('1\n2\n3\n');
  });
});

describe.skipIf(skipWithout(python))('the python runner', () => {
  it('RunnerPool (python) - a PYTHONPATH that shadows the standard library does not reach the runner, only its commands', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-runner-isolated-'));
    const shadow = path.join(dir, 'shadow');
    mkdirSync(shadow, { recursive: true });
    mkdirSync(path.join(dir, 'scratch'));
    writeFileSync(path.join(shadow, 'json.py'), 'raise SystemExit("the project\'s json.py, not the standard one")\n');
    // The runner starts with the environment the pool was made in.
    const before = process.env.PYTHONPATH;
    process.env.PYTHONPATH = shadow;
    const shadowed = new RunnerPool(dir, path.join(dir, 'scratch'), new RunnerPrograms([pythonRunner(toolPath(python))]));
    if (before === undefined) delete process.env.PYTHONPATH;
    else process.env.PYTHONPATH = before;
    try {
      const outcome = await shadowed.run({
        cwd: dir,
        env: { ...process.env, PYTHONPATH: shadow },
        pieces: ['cat /proc/$PPID/comm > parent.txt; printenv PYTHONPATH > path.txt'],
        values: [],
        signal: new AbortController().signal,
      });
      expect(outcome.exitCode).toBe(0);
      // Run by the runner's sh, not spawned directly after a runner that failed to start.
      expect(readFileSync(path.join(dir, 'parent.txt'), 'utf8').trim()).toMatch(/^python/);
      expect(readFileSync(path.join(dir, 'path.txt'), 'utf8')).toBe(`${shadow}\n`);
    } finally {
      shadowed.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
