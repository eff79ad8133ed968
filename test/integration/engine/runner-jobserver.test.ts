// The runners' jobserver (runner.py's TOKENS argument): jobs beyond the run's -j wait in their
// runners for a token, so a command starts the moment another ends, without refinery in between;
// a waiting job can be dropped before it starts (an abort, or a run stopped after a failure).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerPool } from '../../../src/engine/shell/runner-pool.ts';
import { pythonRunner, RunnerPrograms } from '../../../src/engine/shell/runner-programs.ts';
import { commandLog, mostAtOnce } from '../../helpers/command-log.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const python = systemTool('python3');

let dir: string;
let pool: RunnerPool | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-jobserver-'));
  mkdirSync(path.join(dir, 'scratch'));
});

afterEach(() => {
  pool?.close();
  pool = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function jobserverPool(commandsAtOnce: number, programs = () => [pythonRunner(toolPath(python))]): RunnerPool {
  pool = new RunnerPool(dir, path.join(dir, 'scratch'), new RunnerPrograms(programs()), commandsAtOnce);
  return pool;
}

function run(p: RunnerPool, script: string, signal = new AbortController().signal, onStart?: () => void, stopsRunIfFailed = false) {
  return p.run({ cwd: dir, env: process.env, pieces: [script], values: [], signal, stopsRunIfFailed, ...(onStart ? { onStart } : {}) });
}

/** Runs `script` and resolves once its command started (it holds the token then), with its outcome to come. */
async function holding(p: RunnerPool, script: string, stopsRunIfFailed = false) {
  let started!: () => void;
  const start = new Promise<void>((resolve) => (started = resolve));
  const outcome = run(p, script, undefined, started, stopsRunIfFailed);
  await start;
  return { outcome };
}

/** A command that logs `+ NAME` as it starts and `- NAME` as it ends, one O_APPEND line each. */
const logged = (name: string, seconds: number): string => `echo "+ ${name}" >> log; sleep ${seconds}; echo "- ${name}" >> log`;

/** Blocks this thread (and its event loop) without using the CPU. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe.skipIf(skipWithout(python))('RunnerPool with a jobserver', () => {
  it('jobserver - eight jobs held at once with two tokens: never more than two commands run, and two do', async () => {
    const p = jobserverPool(2);
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => run(p, logged(`j${i}`, 0.15))));
    expect(outcomes.map((o) => o.exitCode)).toEqual(Array(8).fill(0));
    expect(mostAtOnce(commandLog(path.join(dir, 'log')))).toBe(2);
  });

  it('jobserver - a waiting job starts when the command before it ends, while refinery is busy', async () => {
    const p = jobserverPool(1);
    const timed = (name: string): string => `date +%s%N > ${name}.start; sleep 0.2; date +%s%N > ${name}.end`;
    const both = [run(p, timed('a')), run(p, timed('b'))];
    // Nothing is read or sent while this thread is blocked: the runners pass the token themselves.
    blockFor(2500);
    const at = (file: string): bigint => BigInt(readFileSync(path.join(dir, file), 'utf8').trim());
    expect(existsSync(path.join(dir, 'a.end')) && existsSync(path.join(dir, 'b.end'))).toBe(true);
    // One after the other, in either order.
    expect(at('b.start') >= at('a.end') || at('a.start') >= at('b.end')).toBe(true);
    expect((await Promise.all(both)).map((o) => o.exitCode)).toEqual([0, 0]);
  });

  it('jobserver - a job aborted while it waits for a token never starts, and the runners go on', async () => {
    const p = jobserverPool(1);
    // The first command holds the only token until the test lets it go: no race with the abort.
    const { outcome: first } = await holding(p, 'while [ ! -f go ]; do sleep 0.02; done; echo done > first');
    const abort = new AbortController();
    const waiting = run(p, 'echo ran > waiting', abort.signal);
    abort.abort();
    expect(await waiting).toMatchObject({ exitCode: null, aborted: true });
    expect(existsSync(path.join(dir, 'first'))).toBe(false);
    writeFileSync(path.join(dir, 'go'), '');
    expect((await first).exitCode).toBe(0);
    expect((await run(p, 'echo later > later')).exitCode).toBe(0);
    expect(existsSync(path.join(dir, 'waiting'))).toBe(false);
    expect(readFileSync(path.join(dir, 'later'), 'utf8')).toBe('later\n');
  });

  it('jobserver - a failure that stops the run: the waiting jobs never start, however long refinery takes to learn of it', async () => {
    const p = jobserverPool(1);
    const { outcome: failing } = await holding(p, 'sleep 0.1; exit 3', true);
    const waiting = run(p, 'echo ran > waiting');
    // Nobody calls dropWaiting here: the pool drops the waiting jobs itself, before the failed
    // command's token goes back (the executor learns of the failure only after async work).
    expect((await failing).exitCode).toBe(3);
    expect(await waiting).toMatchObject({ exitCode: null, notStarted: true });
    // A job given after the failure (its stage was still being prepared) does not start either.
    expect(await run(p, 'echo later > later')).toMatchObject({ exitCode: null, notStarted: true });
    expect(existsSync(path.join(dir, 'waiting'))).toBe(false);
    expect(existsSync(path.join(dir, 'later'))).toBe(false);
  });

  it('jobserver - after a command fails, a waiting job starts once its token is given back', async () => {
    const p = jobserverPool(1);
    const { outcome: failing } = await holding(p, 'sleep 0.1; exit 3');
    const waiting = run(p, 'echo ran > waiting');
    expect((await failing).exitCode).toBe(3);
    expect((await waiting).exitCode).toBe(0);
    expect(readFileSync(path.join(dir, 'waiting'), 'utf8')).toBe('ran\n');
  });
});

describe('RunnerPool with a jobserver and no python', () => {
  it('jobserver - commands spawned directly from Node: the pool itself keeps them to the limit', async () => {
    const p = jobserverPool(1, () => []);
    const outcomes = await Promise.all(Array.from({ length: 3 }, (_, i) => run(p, logged(`j${i}`, 0.1))));
    expect(outcomes.map((o) => o.exitCode)).toEqual([0, 0, 0]);
    expect(mostAtOnce(commandLog(path.join(dir, 'log')))).toBe(1);
  });
});
