import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { parseRecord } from '../../../src/workflows/jobs/record-codec.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';
import { PYTHON_PUBLISHER, REPO_ROOT, TSX_LOADER, run, tempDir } from './support.ts';

const WORKER = path.join(REPO_ROOT, 'test/integration/jobs/fixtures/registry-worker.ts');
const python3 = systemTool('python3');
const broker = { host: '127.0.0.1', port: 1883, tls: false, username: null, password: null };

describe.skipIf(skipWithout(python3))('registry under concurrent writers', () => {
  it('JobRegistry - 16 processes registering and updating at once (plus Python fcntl writers) leave valid records with strictly increasing seq', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const paths = registryPaths(dir);
      const registry = new JobRegistry(paths);
      const { record: shared } = await registry.register({
        prompt: 'shared',
        agent: 'a',
        agentSession: 'none',
        broker,
        timeoutSec: 60,
        idleTimeoutSec: 60,
        compat: true,
      });
      const PROCESSES = 16;
      const SHARED_BUMPS = 8;
      const PY_BUMPS = 10;
      const nodeRuns = Array.from({ length: PROCESSES }, () =>
        run([process.execPath, '--import', TSX_LOADER, WORKER, dir, shared.job_id, '2', String(SHARED_BUMPS), '3'], { cwd: dir }),
      );
      const pyRuns = [0, 1].map(() =>
        run(
          [toolPath(python3), PYTHON_PUBLISHER, '--registry-dir', paths.registryDir, '--job', shared.job_id, '--bump', String(PY_BUMPS)],
          { cwd: dir },
        ),
      );
      const results = await Promise.all([...nodeRuns, ...pyRuns]);
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const nodeOut = results.slice(0, PROCESSES).map((r) => JSON.parse(r.stdout) as { own: string[]; shared: number[] });
      const pyOut = results.slice(PROCESSES).map((r) => JSON.parse(r.stdout) as number[]);
      const sequences = [...nodeOut.map((o) => o.shared), ...pyOut];
      // Each writer saw its own seqs strictly increasing ...
      for (const seqs of sequences) for (let i = 1; i < seqs.length; i += 1) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
      // ... and all writers together got every seq exactly once.
      const total = PROCESSES * SHARED_BUMPS + 2 * PY_BUMPS;
      expect(sequences.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect((await registry.get(shared.job_id)).last_seq).toBe(total);
      // Every record file is complete, valid JSON; no temp files are left behind.
      const files = readdirSync(paths.registryDir).filter((f) => f.endsWith('.json'));
      expect(files).toHaveLength(1 + PROCESSES * 2);
      for (const file of files) parseRecord(readFileSync(path.join(paths.registryDir, file), 'utf8'), file);
      expect(readdirSync(paths.registryDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      for (const { own } of nodeOut) for (const id of own) expect((await registry.get(id)).last_seq).toBe(3);
    } finally {
      cleanup();
    }
  });
});
