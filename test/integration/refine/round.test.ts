// One full refine round driven by calling the tasks' run() with a hand-built context, against the
// fake OpenAI-compatible server: criteria -> three judges in parallel -> consensus -> regression guard.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { judgeResponder } from './helpers/judge-responder.ts';
import { evaluationAnswer } from './helpers/answers.ts';
import { fileURLToPath } from 'node:url';
import { readJson, runTask, type TaskRun } from './helpers/task-context.ts';
import generateCriteria from '../../../tasks/generate-criteria.ts';
import evaluateBackend from '../../../tasks/evaluate-backend.ts';
import consensus from '../../../tasks/consensus.ts';
import regressionGuard from '../../../tasks/regression-guard.ts';

let server: FakeOpenAiServer;
let root: string;
const JUDGES = ['judge-a', 'judge-b', 'judge-c'];
const CLAUDE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../helpers/fake-agent-clis/claude');

beforeAll(async () => {
  server = await startFakeOpenAiServer(
    judgeResponder({
      scores: (model) => ({ 'model-a': 5, 'model-b': 7, 'model-c': 8 })[model] ?? 6,
      // b and c vote for A (judge-a), a votes for C: a 2/3 majority for judge-a.
      voteFor: (model) => (model === 'model-a' ? 'C' : 'A'),
    }),
  );
  root = mkdtempSync(path.join(tmpdir(), 'refinery-round-'));
  const backends = JUDGES.map(
    (j) =>
      `  ${j}: {kind: openai, base_url: "${server.url}", model: model-${j.slice(-1)}, price: {input_per_mtok: 3, output_per_mtok: 15}}`,
  );
  writeFileSync(
    path.join(root, 'refinery.config.yaml'),
    `backends:\n  writer: {kind: openai, base_url: "${server.url}", model: model-w}\n${backends.join('\n')}\n` +
      `  cli-judge: {kind: command, preset: claude, model: sonnet, executable: "${CLAUDE}", env: [FAKE_AGENT_REPLY_FILE, FAKE_AGENT_LOG]}\n`,
  );
  mkdirSync(path.join(root, 'deliverable'));
  writeFileSync(path.join(root, 'deliverable/README.md'), '# Tool\n\nRun `tool --help`.\n');
  writeFileSync(path.join(root, 'deliverable/previous.md'), '# Tool\n');
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

const judgeDir = (j: string) => `refine/round_001/judges/${j}`;

async function playRound(runId: string): Promise<TaskRun[]> {
  const runs: TaskRun[] = [];
  runs.push(
    await runTask(
      generateCriteria,
      { task: 'Write a README for the tool', backend: 'writer', deliverable: ['deliverable/README.md'] },
      { root, runId, outputs: { criteria: 'refine/criteria.json' } },
    ),
  );
  const judged = await Promise.all(
    JUDGES.map((backend) =>
      runTask(
        evaluateBackend,
        { backend, criteria: 'refine/criteria.json', task: 'Write a README for the tool', round: 1 },
        {
          root,
          runId,
          stage: `evaluate[${backend}]`,
          inputs: ['deliverable/README.md', 'refine/criteria.json'],
          outputs: {
            verdict: `${judgeDir(backend)}/verdict.json`,
            critique: `${judgeDir(backend)}/critique_packet.md`,
            next_tasks: `${judgeDir(backend)}/next_tasks.json`,
          },
        },
      ),
    ),
  );
  runs.push(...judged);
  runs.push(
    await runTask(
      consensus,
      {
        verdicts: JUDGES.map((j) => `${judgeDir(j)}/verdict.json`),
        criteria: 'refine/criteria.json',
        deliverable: ['deliverable/README.md'],
      },
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
      consensus,
      { verdicts: JUDGES.map((j) => `${judgeDir(j)}/verdict.json`), criteria: 'refine/criteria.json', mode: 'harshest' },
      {
        root,
        runId,
        outputs: {
          consensus: 'refine/round_001/harshest/consensus.json',
          verdict: 'refine/round_001/harshest/verdict.json',
          critique: 'refine/round_001/harshest/critique_packet.md',
          next_tasks: 'refine/round_001/harshest/next_tasks.json',
        },
      },
    ),
  );
  runs.push(
    await runTask(
      regressionGuard,
      { backend: 'judge-b', criteria: 'refine/criteria.json', previous: ['deliverable/previous.md'], candidate: ['deliverable/README.md'] },
      { root, runId, outputs: { regression: 'refine/round_001/regression.json' } },
    ),
  );
  return runs;
}

describe('refine round (tasks driven directly)', () => {
  let first: TaskRun[];
  let requestsAfterFirst: number;

  it('round - criteria, three parallel judges, vote consensus, harshest and regression guard all land schema-valid', async () => {
    first = await playRound('run-1');
    requestsAfterFirst = server.requests.length;
    for (const run of first) expect(run.rejected).toEqual({});
    const criteria = readJson<{ source: string; criteria: Array<{ id: string }> }>(path.join(root, 'refine/criteria.json'));
    expect(criteria.source).toBe('model');
    expect(criteria.criteria.map((c) => c.id)).toEqual(['E1', 'E2', 'E3', 'E4', 'E5']);

    const b = readJson(path.join(root, judgeDir('judge-b'), 'verdict.json'));
    expect(b).toMatchObject({
      status: 'ok',
      verdict: 'iterate',
      scores: { E1: 7, E5: 7 },
      judge: { backend: 'judge-b', model: 'model-b' },
    });
    const prompt = server.requests.find((r) => r.body.model === 'model-b')?.prompt ?? '';
    expect(prompt).toContain('Run `tool --help`.');
    expect(prompt).not.toContain('"criteria"');

    const report = readJson<Record<string, any>>(path.join(root, 'refine/round_001/consensus.json'));
    expect(report.winner).toEqual({ judge: 'judge-a', label: 'A', step: 1, round: 1 });
    expect(report.forced).toBe(false);
    expect(report.tally).toEqual({ 'judge-a': 2, 'judge-c': 1 });
    expect(report.votes.map((v: { voter: string }) => v.voter)).toEqual(JUDGES);
    expect(report.votes[1]).toMatchObject({ voter: 'judge-b', target: 'judge-a', reason: 'model-b finds it most precise', round: 2 });
    expect(readJson(path.join(root, 'refine/round_001/verdict.json'))).toMatchObject({ scores: { E1: 5 }, judge: { backend: 'judge-a' } });
    expect(readFileSync(path.join(root, 'refine/round_001/critique_packet.md'), 'utf8')).toContain('Finding for E1 (model-a)');

    const voteOrders = server.requests
      .filter((r) => r.prompt.includes('# Consensus round 2'))
      .map((r) => r.prompt.match(/<evaluation label="[A-Z]">/g)?.join(''));
    expect(voteOrders).toHaveLength(3);

    const harshest = readJson(path.join(root, 'refine/round_001/harshest/verdict.json'));
    expect(harshest).toMatchObject({ verdict: 'iterate', scores: { E1: 5 }, aggregate: { mode: 'harshest', judges: JUDGES } });

    const regression = readJson<Record<string, any>>(path.join(root, 'refine/round_001/regression.json'));
    expect(regression.status).toBe('ok');
    expect(regression.dimensions).toHaveLength(5);
    // The fake guard always prefers label B; the verdict depends on which label the candidate drew.
    expect(regression.result).toBe(regression.candidate === 'B' ? 'pass' : 'fail');

    const calls = first.flatMap((r) => r.reports).filter((r) => r.kind === 'llm-call');
    expect(calls.length).toBe(requestsAfterFirst);
    expect(calls.every((c) => c.kind === 'llm-call' && !c.cached && c.latencyMs >= 0)).toBe(true);
  });

  it('round - an identical rerun makes zero backend calls and costs $0', async () => {
    const second = await playRound('run-2');
    expect(server.requests.length).toBe(requestsAfterFirst);
    const calls = second.flatMap((r) => r.reports).filter((r) => r.kind === 'llm-call');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.kind === 'llm-call' && c.cached && c.costUsd === 0)).toBe(true);
    expect(readJson(path.join(root, 'refine/round_001/consensus.json'))).toMatchObject({ winner: { judge: 'judge-a' } });
  });

  it('round - a user criteria file skips the model', async () => {
    writeFileSync(path.join(root, 'my-criteria.json'), JSON.stringify([{ text: 'Clarity', category: 'primary' }, { name: 'Accuracy' }]));
    const before = server.requests.length;
    const run = await runTask(
      generateCriteria,
      { criteria_file: 'my-criteria.json' },
      { root, outputs: { criteria: 'refine/user-criteria.json' } },
    );
    expect(server.requests.length).toBe(before);
    expect(readJson(run.placed.criteria as string)).toEqual({
      schema_version: '1',
      source: 'user',
      criteria: [
        { id: 'E1', text: 'Clarity', category: 'primary' },
        { id: 'E2', text: 'Accuracy', category: 'standard' },
      ],
    });
  });

  it('round - with the budget spent, no call is made and the judge is degraded with the reason', async () => {
    writeFileSync(path.join(root, 'deliverable/new.md'), '# New text that no cache has seen\n');
    const before = server.requests.length;
    const run = await runTask(
      evaluateBackend,
      { backend: 'judge-a', criteria: 'refine/criteria.json', deliverable: ['deliverable/new.md'], budget_usd: 0 },
      {
        root,
        runId: 'run-broke',
        outputs: { verdict: 'broke/verdict.json', critique: 'broke/critique_packet.md', next_tasks: 'broke/next_tasks.json' },
      },
    );
    expect(server.requests.length).toBe(before);
    expect(run.rejected).toEqual({});
    expect(readJson(run.placed.verdict as string)).toMatchObject({
      status: 'degraded',
      degraded_reason: expect.stringContaining('budget exhausted'),
    });
  });

  it('round - malformed criteria twice (answer and repair) falls back to the four defaults with a warning', async () => {
    server.enqueue(
      { kind: 'content', content: 'Here are some thoughts about criteria.' },
      { kind: 'content', content: '{"criteria": [{"text": "only one"}]}' },
    );
    const run = await runTask(
      generateCriteria,
      { task: 'A different task, so no cached answer applies', backend: 'writer' },
      { root, outputs: { criteria: 'refine/default-criteria.json' } },
    );
    const doc = readJson<Record<string, any>>(run.placed.criteria as string);
    expect(doc.source).toBe('default');
    expect(doc.criteria.map((c: { id: string; category: string }) => `${c.id}:${c.category}`)).toEqual([
      'E1:standard',
      'E2:standard',
      'E3:primary',
      'E4:standard',
    ]);
    expect(doc.warnings[0]).toContain('1 criteria; between 4 and 7 are required');
    expect(run.reports).toContainEqual({ kind: 'warning', message: doc.warnings[0] });
    const repair = server.requests.at(-1)?.prompt ?? '';
    expect(repair).toContain('## Your previous answer could not be used');
    expect(repair).toContain('Here are some thoughts about criteria.');
  });

  it('round - a claude CLI judge in print mode evaluates through the same task', async () => {
    const reply = path.join(root, 'cli-reply.json');
    writeFileSync(reply, evaluationAnswer({ ids: ['E1', 'E2', 'E3', 'E4', 'E5'], verdict: 'converged', scores: 9 }));
    process.env.FAKE_AGENT_REPLY_FILE = reply;
    try {
      const run = await runTask(
        evaluateBackend,
        { backend: 'cli-judge', criteria: 'refine/criteria.json', deliverable: ['deliverable/README.md'] },
        { root, outputs: { verdict: 'cli/verdict.json', critique: 'cli/critique_packet.md', next_tasks: 'cli/next_tasks.json' } },
      );
      expect(run.rejected).toEqual({});
      expect(readJson(run.placed.verdict as string)).toMatchObject({
        status: 'ok',
        verdict: 'converged',
        judge: { backend: 'cli-judge', model: 'sonnet' },
      });
      expect(readJson(run.placed.next_tasks as string)).toMatchObject({ status: 'none' });
      expect(run.reports).toContainEqual(
        expect.objectContaining({ kind: 'llm-call', backend: 'cli-judge', costUsd: 0.0127, outputTokens: 90 }),
      );
    } finally {
      delete process.env.FAKE_AGENT_REPLY_FILE;
    }
  });

  it('round - a deliverable path outside the project is refused', async () => {
    await expect(
      runTask(
        evaluateBackend,
        { backend: 'judge-a', criteria: 'refine/criteria.json', deliverable: ['../../etc/passwd'] },
        { root, outputs: { verdict: 'x/v.json', critique: 'x/c.md', next_tasks: 'x/n.json' } },
      ),
    ).rejects.toThrow(/resolves outside the project root/);
  });
});
