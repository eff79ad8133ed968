import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dispatcher, dispatchFailure } from '../../../src/engine/executor/dispatch.ts';
import { tearDown } from '../../../src/engine/executor/teardown.ts';
import { stagingDir } from '../../../src/engine/executor/staging.ts';
import { WorkQueue } from '../../../src/engine/executor/work-queue.ts';
import { FileHashes } from '../../../src/engine/state/file-hashes.ts';
import { StageState } from '../../../src/engine/state/stage-state.ts';

/** A job that runs until its gate is opened, recording the most jobs running at once. */
function gatedJobs(count: number) {
  const running = new Set<number>();
  const started: number[] = [];
  let peak = 0;
  const opens: Array<() => void> = [];
  const gates = Array.from({ length: count }, (_, i) => new Promise<void>((resolve) => (opens[i] = resolve)));
  const job = (i: number) => async (): Promise<number> => {
    running.add(i);
    started.push(i);
    peak = Math.max(peak, running.size);
    await gates[i];
    running.delete(i);
    return i;
  };
  return { job, started, open: (i: number) => opens[i]?.(), peak: () => peak, running };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WorkQueue', () => {
  it('WorkQueue - never more than the limit in flight, started in the order given', async () => {
    const queue = new WorkQueue(2);
    const jobs = gatedJobs(5);
    const runs = [0, 1, 2, 3, 4].map((i) => queue.run(jobs.job(i)));
    await turn();
    expect(queue.inFlight).toBe(2);
    for (let i = 0; i < 5; i += 1) {
      jobs.open(i);
      await turn();
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(jobs.peak()).toBe(2);
    expect(jobs.started).toEqual([0, 1, 2, 3, 4]);
  });

  it('WorkQueue - an abort while waiting rejects with its reason and frees the place; a started job keeps its slot to the end', async () => {
    const queue = new WorkQueue(1);
    const jobs = gatedJobs(3);
    const controller = new AbortController();
    const first = queue.run(jobs.job(0), controller.signal);
    const second = queue.run(jobs.job(1), controller.signal);
    const third = queue.run(jobs.job(2));
    await turn();
    controller.abort(new Error('stop'));
    await expect(second).rejects.toThrow('stop');
    await turn();
    // The first job was running: the abort is its own business, and it holds the slot.
    expect(jobs.started).toEqual([0]);
    jobs.open(0);
    expect(await first).toBe(0);
    jobs.open(2);
    expect(await third).toBe(2);
    expect(jobs.started).toEqual([0, 2]);
  });

  it('WorkQueue - a signal aborted already rejects without running the job', async () => {
    const queue = new WorkQueue(1);
    const jobs = gatedJobs(1);
    await expect(queue.run(jobs.job(0), AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(jobs.started).toEqual([]);
  });
});

describe('Dispatcher', () => {
  it('Dispatcher - a named pool bounds its jobs while the others use the free slots of the run', async () => {
    const dispatcher = new Dispatcher(3, { llm: 1 });
    const jobs = gatedJobs(5);
    const inPool = new Set([0, 1]);
    let poolPeak = 0;
    const run = (i: number) => async (): Promise<void> => {
      const job = jobs.job(i)();
      poolPeak = Math.max(poolPeak, [...jobs.running].filter((j) => inPool.has(j)).length);
      await job;
    };
    const done = [
      dispatcher.dispatch('llm', run(0)),
      dispatcher.dispatch('llm', run(1)),
      dispatcher.dispatch(undefined, run(2)),
      dispatcher.dispatch(undefined, run(3)),
      dispatcher.dispatch(undefined, run(4)),
    ];
    await turn();
    // The second llm job waits for its pool; the free run slots go to the others.
    expect(jobs.started).toEqual([0, 2, 3]);
    jobs.open(0);
    await turn();
    // Then it queues for a run slot behind the job that was there first.
    expect(jobs.started).toEqual([0, 2, 3, 4]);
    jobs.open(2);
    await turn();
    expect(jobs.started).toEqual([0, 2, 3, 4, 1]);
    for (const i of [1, 3, 4]) jobs.open(i);
    await Promise.all(done);
    expect(jobs.peak()).toBe(3);
    expect(poolPeak).toBe(1);
  });

  it('Dispatcher - at least one slot, and a pool the pipeline does not declare uses the run slots', async () => {
    const dispatcher = new Dispatcher(0, {});
    const jobs = gatedJobs(2);
    const done = [
      dispatcher.dispatch('ghost', async () => void (await jobs.job(0)())),
      dispatcher.dispatch(undefined, async () => void (await jobs.job(1)())),
    ];
    await turn();
    expect(jobs.started).toEqual([0]);
    jobs.open(0);
    jobs.open(1);
    await Promise.all(done);
    expect(jobs.peak()).toBe(1);
  });

  it('dispatchFailure - a file-system error is one line naming the file; anything else is an internal error with its stack', () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      syscall: 'write',
      path: '/p/.refinery/state/x.jsonl',
    });
    const line = dispatchFailure(full, '/p');
    expect(line.code).toBe('file-system-error');
    expect(line.reason).not.toContain('\n');
    expect(line.reason).toContain('no space left on device');
    const bug = dispatchFailure(new TypeError('x is undefined'), '/p');
    expect(bug.code).toBe('internal-error');
    expect(bug.reason).toMatch(/^internal error: TypeError: x is undefined\n\s+at /);
  });
});

describe('tearDown', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('tearDown - saves the stat cache and the journal, removes the run staging folder, and reports no problem when all is written', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'refinery-teardown-'));
    const staging = stagingDir(root, 'run-1');
    mkdirSync(staging, { recursive: true });
    writeFileSync(path.join(staging, 'a.out'), 'x');
    writeFileSync(path.join(root, 'input.txt'), 'x');
    // Older than the racy-git window, so its stamp is cached.
    utimesSync(path.join(root, 'input.txt'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const hashes = new FileHashes(root, () => {});
    hashes.hash('input.txt');
    const state = new StageState(root, 'p', () => {});
    expect(tearDown({ root, runId: 'run-1', hashes, state })).toEqual([]);
    expect(existsSync(staging)).toBe(false);
    expect(existsSync(path.join(root, '.refinery', 'cache', 'file-hashes.json'))).toBe(true);
  });
});
