import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { FileLockError, withFileLock } from '../../../src/workflows/jobs/file-lock.ts';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';
import { PYTHON_PUBLISHER, run, tempDir } from './support.ts';

const python3 = systemTool('python3');

const TRY_LOCK = [
  'import fcntl, sys',
  'f = open(sys.argv[1], "a")',
  'try:',
  '    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)',
  '    print("acquired")',
  'except BlockingIOError:',
  '    print("busy")',
].join('\n');

describe.skipIf(skipWithout(python3))('registry lock interoperates with Python fcntl.flock', () => {
  it('withFileLock - while refinery holds <registry>/.lock, Python cannot take fcntl.flock on it; after release it can', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const lock = path.join(dir, '.lock');
      const during = await withFileLock(lock, async () =>
        (await run([toolPath(python3), '-c', TRY_LOCK, lock], { cwd: dir })).stdout.trim(),
      );
      const after = (await run([toolPath(python3), '-c', TRY_LOCK, lock], { cwd: dir })).stdout.trim();
      expect(during).toBe('busy');
      expect(after).toBe('acquired');
    } finally {
      cleanup();
    }
  });

  it('JobRegistry - a read-modify-write waits while Python holds the lock and gives up with a clear error', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const paths = registryPaths(dir);
      mkdirSync(paths.registryDir, { recursive: true });
      const registry = new JobRegistry(paths, { lockTimeoutSec: 1 });
      const broker = { host: '127.0.0.1', port: 1883, tls: false, username: null, password: null };
      const { record } = await registry.register({ prompt: 'p', agent: 'a', agentSession: 's', broker, timeoutSec: 9, idleTimeoutSec: 9 });
      const holder = spawn(toolPath(python3), [PYTHON_PUBLISHER, '--registry-dir', paths.registryDir, '--hold-lock'], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines = createInterface({ input: holder.stdout });
      await new Promise<void>((resolve) => lines.once('line', () => resolve()));
      const error = await registry.reserveSeq(record.job_id, 'progress').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileLockError);
      expect((error as Error).message).toContain('still held by another process');
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.stdin.end();
      await exited;
      expect((await registry.reserveSeq(record.job_id, 'progress')).seq).toBe(1);
    } finally {
      cleanup();
    }
  });
});
