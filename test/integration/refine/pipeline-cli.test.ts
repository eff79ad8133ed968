// The refine pipeline through the real CLI (`node bin/refinery.js run refine`) in a temp project:
// the bundled offline example, the worker path (a scripted worker agent over MQTT between rounds), and
// the run budget (`--budget-usd`) against the fake OpenAI-compatible server.
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { events, REPO_ROOT, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { judgeResponder } from './helpers/judge-responder.ts';
import { EXAMPLE_REFINE_PARAMS, exampleProject } from '../../helpers/refine-example.ts';
import { invalidArtifacts, readJson, sessionFileList } from './helpers/session-files.ts';

const EXAMPLE = EXAMPLE_REFINE_PARAMS;

function summaryOf(stdout: string, stage: string): string {
  const end = events(stdout).find((e) => e.type === 'stage-end' && e.stage === stage);
  return String(end?.summary ?? '');
}

describe('refine pipeline through the CLI', () => {
  it('refine - the bundled example runs offline: session layout, summary with charts, next tasks printed; a cached rerun costs $0', async () => {
    const project = exampleProject();
    try {
      const first = await runCli(['run', 'refine', ...EXAMPLE, '--json'], { cwd: project.root });
      expect(first.code, first.stderr).toBe(0);
      const session = project.path('.refinery/sessions/example');
      const expected = [
        'criteria.json',
        'criteria.usage.json',
        'regression.json',
        'regression.usage.json',
        'summary.json',
        'SUMMARY.md',
        ...['consensus.json', 'verdict.json', 'critique_packet.md', 'next_tasks.json', 'usage.json'].map((f) => `round_001/${f}`),
        ...['a', 'b', 'c'].flatMap((j) =>
          ['verdict.json', 'critique_packet.md', 'next_tasks.json', 'usage.json'].map((f) => `round_001/judges/example-judge-${j}/${f}`),
        ),
      ];
      expect(sessionFileList(session).sort()).toEqual(expected.sort());
      expect(invalidArtifacts(session)).toEqual([]);
      expect(existsSync(project.path('refine'))).toBe(false);

      const summary = readJson(path.join(session, 'summary.json'));
      expect(summary).toMatchObject({
        session: 'example',
        stopped: { reason: 'no_worker', round: 1 },
        final_verdict: 'iterate',
        regression: { result: 'pass' },
      });
      expect(summary.next_tasks.map((t: { id: string }) => t.id)).toEqual(['T1', 'T2', 'T3']);
      expect(summary.rounds[0]).toMatchObject({ winner: 'example-judge-b', scores: { E1: 6, E2: 3, E3: 4, E4: 3, E5: 6 } });
      expect(summary.usage.total.calls).toBe(8);
      expect(summary.usage.total.cost_usd).toBeGreaterThan(0);
      expect(summary.usage.this_run).toEqual(summary.usage.total);
      const md = readFileSync(path.join(session, 'SUMMARY.md'), 'utf8');
      expect(md.match(/```mermaid\nxychart-beta\n/g)).toHaveLength(6);
      expect(md.match(/y-axis "score" 0 --> 10/g)).toHaveLength(5);
      expect(md).toContain('1. **T1** Replace --sep with the real flag --separator');
      expect(summaryOf(first.stdout, 'summary')).toMatch(/^ITERATE after 1 round \(no worker\); next: T1 .*; T2 .*; T3 /);
      expect(summaryOf(first.stdout, 'rounds#1.consensus')).toMatch(/winner example-judge-b; iterate; next: T1 /);

      const again = await runCli(['run', 'refine', ...EXAMPLE, '--json', '--param', 'session=second'], { cwd: project.root });
      expect(again.code, again.stderr).toBe(0);
      const cached = readJson(project.path('.refinery/sessions/second/summary.json'));
      expect(cached.usage.this_run).toMatchObject({ calls: 8, cached_calls: 8, cost_usd: 0 });
      expect(cached.usage.this_run.original_cost_usd).toBeCloseTo(summary.usage.total.cost_usd, 8);
      expect(readFileSync(project.path('.refinery/sessions/second/SUMMARY.md'), 'utf8')).toMatch(
        /\| this run \| 8 \| 8 \| \d+ \| \d+ \| \$0\.0000 \| \$0\.0\d+ \|/,
      );
    } finally {
      project.cleanup();
    }
  });

  it('refine - neither query nor task_file: the first stage fails naming both params, before any model call', async () => {
    const project = exampleProject();
    try {
      // The example's params but its task_file (each `--param` flag goes with the value after it).
      const withoutTask = EXAMPLE.filter((arg, i) => !arg.startsWith('task_file=') && !EXAMPLE[i + 1]?.startsWith('task_file='));
      expect(withoutTask).toHaveLength(EXAMPLE.length - 2);
      const r = await runCli(['run', 'refine', ...withoutTask, '--json'], { cwd: project.root });
      expect(r.code).toBe(1);
      const end = events(r.stdout).find((e) => e.type === 'stage-end' && e.stage === 'criteria');
      expect(end).toMatchObject({ status: 'failed', code: 'invalid-params' });
      expect(String(end?.reason)).toContain('in the refine pipeline: --param query=TEXT or --param task_file=FILE');
      expect(existsSync(project.path('.refinery/sessions/example/criteria.usage.json'))).toBe(false);
    } finally {
      project.cleanup();
    }
  });

  it('refine - with a worker, a non-converged round hands its next tasks to the worker and the next round evaluates the changed deliverable', async () => {
    const project = exampleProject();
    try {
      // Round 2's recorded judges converge (round 1 stays as recorded: iterate).
      for (const j of ['a', 'b', 'c']) {
        const dir = project.path(`examples/refine/recordings/judge-${j}`);
        const recording = readJson(path.join(dir, 'evaluate.json'));
        const answer = recording.json;
        answer.verdict = 'converged';
        answer.scores = Object.fromEntries(Object.keys(answer.scores).map((id) => [id, 8]));
        answer.next_tasks = null;
        writeFileSync(path.join(dir, 'evaluate.r2.json'), JSON.stringify(recording));
      }
      cpSync(path.join(REPO_ROOT, 'test/helpers/scripted-worker.mjs'), project.path('scripted-worker.mjs'));
      const before = readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8');
      const run = await runCli(
        ['run', 'refine', ...EXAMPLE, '--json', '--param', 'session=w', '--param', 'worker=node scripted-worker.mjs'],
        { cwd: project.root },
      );
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const statuses = stageEnds(run.stdout);
      expect(statuses).toMatchObject({
        'rounds#1.work': 'skipped',
        'rounds#2.work': 'succeeded',
        'rounds#2.consensus': 'succeeded',
        summary: 'succeeded',
      });
      expect(Object.keys(statuses).some((s) => s.startsWith('rounds#3'))).toBe(false);

      const session = project.path('.refinery/sessions/w');
      const tasks = readJson(path.join(session, 'round_001/next_tasks.json')).tasks as Array<{ id: string; description: string }>;
      const after = readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8');
      expect(after.startsWith(before)).toBe(true);
      expect(after).toContain('## Changes (round 1)');
      for (const t of tasks) expect(after).toContain(`- ${t.id}: ${t.description}`);
      expect(readJson(path.join(session, 'round_001/worker.json'))).toMatchObject({ status: 'completed', agent: 'worker' });
      expect(readJson(path.join(session, 'round_002/verdict.json'))).toMatchObject({ verdict: 'converged', status: 'ok' });
      expect(invalidArtifacts(session)).toEqual([]);

      // Order: the worker finished before any round-2 judge started, so each read the changed files.
      const list = events(run.stdout);
      const workEnd = list.findIndex((e) => e.type === 'stage-end' && e.stage === 'rounds#2.work');
      const evalStarts = list.flatMap((e, i) => (e.type === 'stage-start' && String(e.stage).startsWith('rounds#2.evaluate[') ? [i] : []));
      expect(evalStarts).toHaveLength(3);
      expect(Math.min(...evalStarts)).toBeGreaterThan(workEnd);

      const summary = readJson(path.join(session, 'summary.json'));
      expect(summary).toMatchObject({ stopped: { reason: 'converged', round: 2 }, final_verdict: 'converged', next_tasks: [] });
      expect(summary.rounds.map((r: { verdict: string }) => r.verdict)).toEqual(['iterate', 'converged']);
      expect(summary.rounds[0].worker).toMatchObject({ status: 'completed' });
      expect(readFileSync(path.join(session, 'SUMMARY.md'), 'utf8')).toContain('x-axis ["R1", "R2"]');
    } finally {
      project.cleanup();
    }
  });

  it('refine - a worker that reports error fails its stage with the reason; the round before it stays complete and valid', async () => {
    const project = exampleProject();
    try {
      cpSync(path.join(REPO_ROOT, 'test/helpers/scripted-worker.mjs'), project.path('scripted-worker.mjs'));
      const before = readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8');
      const args = ['run', 'refine', ...EXAMPLE, '--json', '--param', 'session=f', '--param', 'worker=node scripted-worker.mjs'];
      const run = await runCli(args, { cwd: project.root, env: { FAKE_WORKER_FAIL: '1' } });
      expect(run.code).toBe(1);
      const work = events(run.stdout).find((e) => e.type === 'stage-end' && e.stage === 'rounds#2.work');
      expect(work).toMatchObject({ status: 'failed', reason: expect.stringMatching(/ended error: .*scripted failure/) });
      expect(stageEnds(run.stdout)).toMatchObject({ 'rounds#1.consensus': 'succeeded', summary: 'blocked' });
      expect(readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8')).toBe(before);
      expect(existsSync(project.path('.refinery/sessions/f/round_001/worker.json'))).toBe(false);
      expect(invalidArtifacts(project.path('.refinery/sessions/f'))).toEqual([]);
    } finally {
      project.cleanup();
    }
  });
});

describe('refine pipeline and the run budget', () => {
  let server: FakeOpenAiServer;
  let project: TempProject;
  beforeAll(async () => {
    server = await startFakeOpenAiServer(judgeResponder({ scores: () => 6 }));
    const price = '{ input_per_mtok: 3, output_per_mtok: 15 }';
    const judges = ['a', 'b', 'c'].map(
      (j) => `  judge-${j}: { kind: openai, base_url: "${server.url}", model: model-${j}, price: ${price} }`,
    );
    project = tempProject({
      'refinery.config.yaml': `backends:\n  writer: { kind: openai, base_url: "${server.url}", model: model-w, price: ${price} }\n${judges.join('\n')}\n`,
      'deliverable/README.md': '# Tool\n\nRun `tool --help`.\n',
      'previous/README.md': '# Tool\n',
    });
    cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
  });
  afterAll(async () => {
    await server.close();
    project.cleanup();
  });

  it('refine - --budget-usd 0.00001: the first call spends it, every later call is degraded with a budget reason, every artifact stays schema-valid', async () => {
    const params = {
      session: 'budget',
      query: 'Write a README for the tool',
      deliverable: 'deliverable/README.md',
      previous: 'previous/README.md',
      writer: 'writer',
      judges: 'judge-a,judge-b,judge-c',
      guard: 'judge-a',
    };
    const args = [
      'run',
      'refine',
      '--json',
      '--budget-usd',
      '0.00001',
      ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`]),
    ];
    const run = await runCli(args, { cwd: project.root });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body.model).toBe('model-w');

    const session = project.path('.refinery/sessions/budget');
    expect(invalidArtifacts(session)).toEqual([]);
    expect(existsSync(project.path('.refinery/rejected'))).toBe(false);
    expect(readJson(path.join(session, 'criteria.json'))).toMatchObject({ source: 'model' });
    const budgetReason = expect.stringMatching(/run budget exhausted \(--budget-usd\)/);
    expect(readJson(path.join(session, 'regression.json'))).toMatchObject({ status: 'degraded', reason: budgetReason });
    for (const j of ['a', 'b', 'c']) {
      expect(readJson(path.join(session, `round_001/judges/judge-${j}/verdict.json`))).toMatchObject({
        status: 'degraded',
        verdict: 'iterate',
        degraded_reason: budgetReason,
      });
      expect(readJson(path.join(session, `round_001/judges/judge-${j}/usage.json`))).toMatchObject({ calls: [], totals: { calls: 0 } });
    }
    expect(readJson(path.join(session, 'round_001/verdict.json'))).toMatchObject({ status: 'degraded' });
    const summary = readJson(path.join(session, 'summary.json'));
    expect(summary.usage.total.calls).toBe(1);
    expect(summary.usage.total.cost_usd).toBeGreaterThan(0.00001);
    expect(summary.rounds[0]).toMatchObject({
      status: 'degraded',
      judges: [{ status: 'degraded' }, { status: 'degraded' }, { status: 'degraded' }],
    });
  });
});
