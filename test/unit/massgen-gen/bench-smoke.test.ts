import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '../../..');

describe('bench/analyze/run.ts', () => {
  it('bench/analyze/run.ts --gb 0.02 - measures both workloads in child processes and prints the ratio', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/analyze/run.ts', '--gb', '0.02'], {
      cwd: REPO,
      maxBuffer: 4 * 1024 * 1024,
    });
    expect(stdout).toMatch(/generated 20\.\d MB events\.jsonl/);
    expect(stdout).toMatch(/throughput ratio analyze\/naive: \d+\.\d\dx/);
    // both workloads saw the consensus scenario's figures (winner agent_b, 3 answers, 3 votes)
    expect(stdout).toContain('{"winner":"agent_b","answers":3,"votes":3');
    expect(stdout).toMatch(/\{"lines":\d+,"answers":3,"votes":3\}/);
  });
});
