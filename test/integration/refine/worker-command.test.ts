// The refine pipeline's `worker` param given as a path to a program (README "Worker": any command line
// works), through the real CLI in a temp project.
import { chmodSync, cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, stageEnds, tempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../helpers/refine-example.ts';

describe('refine pipeline worker param', () => {
  it('refine - worker=/path/to/script runs that program as the worker and the round after it evaluates its changes', async () => {
    const project = tempProject();
    try {
      for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
        cpSync(path.join(REPO_ROOT, rel), project.path(rel), { recursive: true });
      const worker = project.path('bin/refine-worker.mjs');
      cpSync(path.join(REPO_ROOT, 'test/helpers/scripted-worker.mjs'), worker);
      chmodSync(worker, 0o755);
      const run = await runCli(
        [
          'run',
          'refine',
          ...EXAMPLE_REFINE_PARAMS,
          '--json',
          '--param',
          'session=p',
          '--param',
          'max_rounds=2',
          '--param',
          `worker=${worker}`,
        ],
        { cwd: project.root },
      );
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(stageEnds(run.stdout)).toMatchObject({
        'rounds#2.work': 'succeeded',
        'rounds#2.consensus': 'succeeded',
        summary: 'succeeded',
      });
      const record = JSON.parse(readFileSync(project.path('.refinery/sessions/p/round_001/worker.json'), 'utf8'));
      expect(record).toMatchObject({ status: 'completed', agent: worker });
      expect(readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8')).toContain('## Changes (round 1)');
    } finally {
      project.cleanup();
    }
  });
});
