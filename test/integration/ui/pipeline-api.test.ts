// The pipeline API over a real run: each stage's state from the run, the journal and
// `refinery plan`; a stage's page data: why it would run (as `refinery why` says), its outputs
// checked against their schemas, and the artifact it had rejected with its errors.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, demoProject, runCli, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

let project: TempProject;
let ui: UiProcess;

beforeAll(async () => {
  project = demoProject();
  // b's report must have a field copy-json never writes: its artifact is rejected.
  project.write('schemas/demo-report.schema.json', JSON.stringify({ type: 'object', required: ['lines', 'title'] }));
  const run = await runCli(['run', 'demo'], { cwd: project.root });
  expect(run.code).toBe(1);
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

async function get<T>(path: string): Promise<T> {
  const answer = await ui.request(path, { auth: true });
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as T;
}

describe('refinery ui pipeline API', () => {
  it('ui - a stage whose artifact was rejected is failed; its page lists the errors by JSON pointer', async () => {
    const graph = await get<{ graph: { nodes: Array<{ id: string; state: string }> } }>('/api/pipelines/demo');
    expect(Object.fromEntries(graph.graph.nodes.map((n) => [n.id, n.state]))).toEqual({ a: 'up-to-date', b: 'failed' });
    const b = await get<{
      state: string;
      why: { decision: string; reasons: string[] } | null;
      outputs: Array<{ name: string; exists: boolean; schema: string }>;
      history: {
        rejected: Array<{ dir: string; issues: Array<{ output: string; pointer: string; message: string }> }>;
        runs: Array<{ status: string }>;
      };
    }>(`/api/pipelines/demo/stage?id=b&why=1`);
    expect(b.state).toBe('failed');
    expect(b.outputs).toMatchObject([{ name: 'report', exists: false, schema: 'demo-report' }]);
    expect(b.history.runs.map((r) => r.status)).toEqual(['failed']);
    expect(b.history.rejected[0]?.issues).toEqual([
      { output: 'report', path: 'out/b.json', pointer: '', message: "is missing required property 'title' (schema demo-report)" },
    ]);
    expect(b.history.rejected[0]?.dir).toMatch(/^\.refinery\/rejected\//);
    // Why it would run: the very answer of refinery why.
    const why = JSON.parse(
      execFileSync(process.execPath, [CLI, 'why', 'demo', 'b', '--json'], { cwd: project.root, encoding: 'utf8' }),
    ) as Array<{ decision: string; reasons: string[] }>;
    expect(b.why).toEqual({ decision: why[0]?.decision, reasons: why[0]?.reasons });
  });

  it('ui - stage outputs are checked against their schema; the selection language pages the stage table', async () => {
    project.write('schemas/demo-report.schema.json', JSON.stringify({ type: 'object', required: ['lines'] }));
    const run = await runCli(['run', 'demo'], { cwd: project.root });
    expect(run.code, run.stderr).toBe(0);
    await get('/api/pipelines/demo/assess?maxAgeMs=0');
    type Stage = { state: string; outputs: Array<{ exists: boolean; validation: { ok: boolean } }> };
    // The server learns of the run by tailing its event log (a watcher and a 0.5 s poll): ask until
    // it has seen the run end, within a bound, instead of assuming it already has.
    let b = await get<Stage>('/api/pipelines/demo/stage?id=b');
    for (const deadline = Date.now() + 15_000; b.state !== 'up-to-date' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      b = await get<Stage>('/api/pipelines/demo/stage?id=b');
    }
    expect(b.state).toBe('up-to-date');
    expect(b.outputs[0]).toMatchObject({ exists: true, validation: { ok: true } });
    project.write('out/b.json', '{"oops": true}');
    const edited = await get<{ outputs: Array<{ validation: { ok: boolean; issues: Array<{ pointer: string; message: string }> } }> }>(
      '/api/pipelines/demo/stage?id=b',
    );
    expect(edited.outputs[0]?.validation).toEqual({
      ok: false,
      issues: [{ pointer: '', message: "is missing required property 'lines'" }],
    });
    // An output edited by hand makes its stage stale (refinery plan says so).
    await get('/api/pipelines/demo/assess?maxAgeMs=0');
    const rows = await get<{ total: number; rows: Array<{ id: string; state: string }> }>('/api/pipelines/demo/stages?select=status:stale');
    expect(rows).toEqual({ total: 1, rows: [expect.objectContaining({ id: 'b', state: 'stale' })] });
    expect((await get<{ total: number }>('/api/pipelines/demo/stages?select=%2Bb')).total).toBe(2);
    expect((await get<{ error: string }>('/api/pipelines/demo/stages?select=nosuch')).error).toContain("no stage matches 'nosuch'");
  });
});
