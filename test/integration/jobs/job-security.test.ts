// What other local users and other clients of the same MQTT broker can learn about a job, or do to it.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { memoryIo, tempDir } from './support.ts';

async function jobs(dir: string, ...argv: string[]) {
  const { io, out, err } = memoryIo(dir);
  const code = await jobsCommand.run(argv, io);
  return { code, out: out(), err: err() };
}

/** Resolves with the first match of `pattern` in what the stream receives from now on. */
function waitFor(stream: NodeJS.WritableStream, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve) => {
    let text = '';
    const readable = stream as unknown as NodeJS.ReadableStream;
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      const match = text.match(pattern);
      if (match) {
        readable.off('data', onData);
        resolve(match);
      }
    };
    readable.on('data', onData);
  });
}

describe('job files on disk', () => {
  it('audit log - meta.json (it holds the prompt), events.ndjson and status.json are readable by their owner only', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const submitter = memoryIo(dir);
      const shown = waitFor(submitter.io.stdout, /--job ([0-9a-f]{8}) --event started/);
      const done = jobsCommand.run(['submit', '--agent', 'human', '--prompt', 'the secret plan', '--timeout', '20'], submitter.io);
      const id = (await shown)[1] as string;
      expect((await jobs(dir, 'publish', '--job', id, '--event', 'completed')).code).toBe(0);
      expect(await done).toBe(0);
      const logDir = path.join(dir, '.mam/delegate_job_logs', id);
      const modes = Object.fromEntries(
        readdirSync(logDir)
          .filter((name) => name.endsWith('.json') || name.endsWith('.ndjson'))
          .map((name) => [name, (statSync(path.join(logDir, name)).mode & 0o777).toString(8)]),
      );
      expect(modes).toEqual({ 'meta.json': '600', 'events.ndjson': '600', 'status.json': '600' });
      expect((statSync(path.join(dir, '.mam/jobs', `${id}.json`)).mode & 0o777).toString(8)).toBe('600');
    } finally {
      cleanup();
    }
  });
});
