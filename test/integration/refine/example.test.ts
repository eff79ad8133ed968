// The bundled example (examples/refine + the example-* replay backends of refinery.config.yaml) runs a
// full round offline, on a copy of a fresh clone's files.
import { cpSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, runTask, type TaskRun } from './helpers/task-context.ts';
import generateCriteria from '../../../tasks/generate-criteria.ts';
import evaluateBackend from '../../../tasks/evaluate-backend.ts';
import consensus from '../../../tasks/consensus.ts';
import regressionGuard from '../../../tasks/regression-guard.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const JUDGES = ['example-judge-a', 'example-judge-b', 'example-judge-c'];
const DELIVERABLE = ['examples/refine/deliverable/README.md', 'examples/refine/deliverable/slugify.mjs'];
let root: string;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'refinery-example-'));
  copyFileSync(path.join(REPO, 'refinery.config.yaml'), path.join(root, 'refinery.config.yaml'));
  cpSync(path.join(REPO, 'examples/refine'), path.join(root, 'examples/refine'), { recursive: true });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function round(runId: string): Promise<TaskRun[]> {
  const runs = [
    await runTask(
      generateCriteria,
      { task_file: 'examples/refine/task.md', backend: 'example-writer' },
      { root, runId, outputs: { criteria: 'refine/criteria.json' } },
    ),
  ];
  runs.push(
    ...(await Promise.all(
      JUDGES.map((backend) =>
        runTask(
          evaluateBackend,
          { backend, criteria: 'refine/criteria.json', deliverable: DELIVERABLE, task_file: 'examples/refine/task.md' },
          {
            root,
            runId,
            outputs: {
              verdict: `refine/round_001/judges/${backend}/verdict.json`,
              critique: `refine/round_001/judges/${backend}/critique_packet.md`,
              next_tasks: `refine/round_001/judges/${backend}/next_tasks.json`,
            },
          },
        ),
      ),
    )),
  );
  runs.push(
    await runTask(
      consensus,
      { judges: JUDGES, judges_dir: 'refine/round_001/judges', criteria: 'refine/criteria.json', deliverable: DELIVERABLE },
      {
        root,
        runId,
        outputs: {
          consensus: 'refine/round_001/consensus.json',
          verdict: 'refine/round_001/verdict.json',
          critique: 'refine/round_001/critique_packet.md',
          next_tasks: 'refine/round_001/next_tasks.json',
        },
      },
    ),
  );
  runs.push(
    await runTask(
      regressionGuard,
      {
        backend: 'example-judge-b',
        criteria: 'refine/criteria.json',
        previous: ['examples/refine/previous/README.md'],
        candidate: DELIVERABLE,
      },
      { root, runId, outputs: { regression: 'refine/regression.json' } },
    ),
  );
  return runs;
}

describe('examples/refine offline', () => {
  it('example - a full round runs offline from the recordings and every artifact is valid', async () => {
    const runs = await round('example-1');
    for (const run of runs) expect(run.rejected).toEqual({});
    expect(readJson(path.join(root, 'refine/criteria.json'))).toMatchObject({
      source: 'model',
      criteria: [{ id: 'E1', category: 'primary' }, {}, {}, {}, { category: 'stretch' }],
    });
    const report = readJson<Record<string, any>>(path.join(root, 'refine/round_001/consensus.json'));
    expect(report).toMatchObject({
      winner: { judge: 'example-judge-b', label: 'B' },
      forced: false,
      tally: { 'example-judge-b': 2, 'example-judge-a': 1 },
    });
    expect(readFileSync(path.join(root, 'refine/round_001/critique_packet.md'), 'utf8')).toContain('`--sep` does not exist');
    expect(readJson(path.join(root, 'refine/round_001/next_tasks.json'))).toMatchObject({
      status: 'ok',
      tasks: [{ id: 'T1' }, { id: 'T2' }, { id: 'T3' }],
    });
    expect(readJson(path.join(root, 'refine/regression.json'))).toMatchObject({ status: 'ok', candidate: 'A', result: 'pass' });
    const cost = runs.flatMap((r) => r.reports).reduce((sum, r) => sum + (r.kind === 'llm-call' ? r.costUsd : 0), 0);
    expect(cost).toBeGreaterThan(0);
  });

  it('example - the rerun is served from the cache at $0', async () => {
    const runs = await round('example-2');
    const calls = runs.flatMap((r) => r.reports).filter((r) => r.kind === 'llm-call');
    expect(calls.length).toBe(8); // criteria 1, evaluations 3, votes 3, regression 1
    expect(calls.every((c) => c.kind === 'llm-call' && c.cached && c.costUsd === 0)).toBe(true);
  });
});
