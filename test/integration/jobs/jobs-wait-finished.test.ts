// `jobs wait --job ID` on a job that already ended: the submit that ran it (and its embedded broker) is
// gone, so the outcome must come from disk, with the exit code a live wait would have given.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { memoryIo, tempDir } from './support.ts';

async function jobs(dir: string, ...argv: string[]) {
  const { io, out, err } = memoryIo(dir);
  const code = await jobsCommand.run(argv, io);
  return { code, out: out(), err: err() };
}

/** Runs a human-agent submit to its end; `report` plays the human once the job is registered. */
async function finishedJob(dir: string, timeoutSec: string, report: (id: string) => Promise<void>): Promise<{ id: string; code: number }> {
  const submitter = memoryIo(dir);
  const registered = new Promise<string>((resolve) => {
    let text = '';
    const stream = submitter.io.stdout as unknown as NodeJS.ReadableStream;
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const id = text.match(/--job ([0-9a-f]{8}) --event started/)?.[1];
      if (id) resolve(id);
    });
  });
  const done = jobsCommand.run(['submit', '--agent', 'human', '--prompt', 'review the draft', '--timeout', timeoutSec], submitter.io);
  const id = await registered;
  await report(id);
  return { id, code: await done };
}

describe('jobs wait on a finished job', () => {
  it('jobs wait --job - a job that ended completed, error or timeout gives its recorded outcome and exit code without a broker', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const completed = await finishedJob(dir, '20', async (id) => {
        expect((await jobs(dir, 'publish', '--job', id, '--event', 'completed', '--detail', 'looks fine')).code).toBe(0);
      });
      const failed = await finishedJob(dir, '20', async (id) => {
        expect((await jobs(dir, 'publish', '--job', id, '--event', 'error', '--detail', 'cannot review')).code).toBe(0);
      });
      const timedOut = await finishedJob(dir, '0.3', async () => {});
      expect([completed.code, failed.code, timedOut.code]).toEqual([0, 1, 2]);

      // Every submit has ended, so no broker is listening anywhere for these jobs.
      const results = [];
      for (const job of [completed, failed, timedOut]) results.push(await jobs(dir, 'wait', '--job', job.id));
      expect(results.map((r) => r.code)).toEqual([0, 1, 2]);
      expect(results.map((r) => r.err)).toEqual(['', '', '']);
      expect(results[0]?.out).toBe(`job=${completed.id} outcome=completed (recorded: looks fine)\n`);
      expect(results[1]?.out).toBe(`job=${failed.id} outcome=error (recorded: cannot review)\n`);
      expect(results[2]?.out).toMatch(new RegExp(`^job=${timedOut.id} outcome=timeout \\(recorded: .*timeout.*\\)\\n$`));
    } finally {
      cleanup();
    }
  });

  it('jobs wait --job - a finished job without an audit status (the Python side set it cancelled) gives what its record says', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const job = await finishedJob(dir, '20', async (id) => {
        expect((await jobs(dir, 'publish', '--job', id, '--event', 'started')).code).toBe(0);
        expect((await jobs(dir, 'publish', '--job', id, '--event', 'completed')).code).toBe(0);
      });
      expect(job.code).toBe(0);
      const file = path.join(dir, '.mam/jobs', `${job.id}.json`);
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), status: 'cancelled' }));
      rmSync(path.join(dir, '.mam/delegate_job_logs', job.id, 'status.json'));
      const waited = await jobs(dir, 'wait', '--job', job.id);
      expect([waited.code, waited.out]).toEqual([1, `job=${job.id} outcome=error (recorded: the registry record says 'cancelled')\n`]);
    } finally {
      cleanup();
    }
  });
});
