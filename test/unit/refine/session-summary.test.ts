import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT } from '../../helpers/project.ts';
import { sessionFiles } from '../../../src/workflows/refine/session-layout.ts';
import { roundLimit, summarizeSession, type SummaryInput } from '../../../src/workflows/refine/session-summary.ts';
import { renderSummaryMarkdown } from '../../../src/workflows/refine/summary-markdown.ts';
import { standingReading } from '../../../src/workflows/refine/quality-markdown.ts';
import { UsageRecorder, type UsageArtifact } from '../../../src/workflows/refine/usage.ts';
import { degradedVerdict, verdictArtifact } from '../../../src/workflows/refine/verdict.ts';
import { placeholderNextTasks } from '../../../src/workflows/refine/next-tasks.ts';

const registry = new SchemaRegistry(REPO_ROOT);
const validate = (name: string, data: unknown): string | undefined => {
  const r = registry.validate(name, data);
  return r.ok ? undefined : r.issues.map((i) => `${i.pointer} ${i.message}`).join('; ');
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'refinery-summary-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function put(rel: string, data: unknown): void {
  const file = path.join(dir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
}

const IDS = ['E1', 'E2'];
const criteria = {
  schema_version: '1',
  source: 'model',
  criteria: [
    { id: 'E1', text: 'Clarity: a newcomer follows it', category: 'primary' },
    { id: 'E2', text: 'Accuracy: "every" example runs', category: 'standard' },
  ],
};

function plan(ids: string[]) {
  return {
    schema_version: '2',
    status: 'ok',
    strategy_mode: 'incremental_refinement',
    success_contract: { outcome_statement: 'o', quality_bar: 'q', fail_if_any: ['f'], required_evidence: ['e'] },
    approach_assessment: { ceiling_status: 'ceiling_not_reached' },
    tasks: ids.map((id, i) => ({
      id,
      description: `Fix thing ${i + 1} | carefully`,
      priority: i === 0 ? 'high' : 2,
      verification: 'v',
      success_criteria: 's',
      failure_signals: ['x'],
      required_evidence: ['y'],
      metadata: { relates_to: ['E2'] },
    })),
  };
}

function usage(stage: string, runId: string, cost: number, cached = false): UsageArtifact {
  const recorder = new UsageRecorder();
  recorder.add({
    backend: 'j',
    model: 'm',
    tag: 'evaluate.r1',
    inputTokens: 100,
    outputTokens: 50,
    costUsd: cached ? 0 : cost,
    originalCostUsd: cost,
    latencyMs: 1,
    cached,
    attempts: cached ? 0 : 1,
  });
  return recorder.artifact(stage, runId);
}

function round(n: number, word: 'iterate' | 'converged', scores: number[], opts: { runId?: string; tasks?: string[] } = {}): void {
  const s = Object.fromEntries(IDS.map((id, i) => [id, scores[i] as number]));
  put(sessionFiles.roundFile(n, 'verdict.json'), verdictArtifact({ verdict: word, scores: s }, { backend: 'consensus' }, n));
  put(
    sessionFiles.roundFile(n, 'next_tasks.json'),
    word === 'iterate' ? plan(opts.tasks ?? ['T1']) : placeholderNextTasks('none', 'converged'),
  );
  put(sessionFiles.roundFile(n, 'usage.json'), usage(`rounds#${n}.consensus`, opts.runId ?? 'run-1', 0.01));
  for (const judge of ['b', 'a']) {
    put(sessionFiles.judgeFile(n, judge, 'verdict.json'), verdictArtifact({ verdict: word, scores: s }, { backend: judge }, n));
    put(sessionFiles.judgeFile(n, judge, 'usage.json'), usage(`rounds#${n}.evaluate[${judge}]`, opts.runId ?? 'run-1', 0.02));
  }
}

function input(over: Partial<SummaryInput> = {}): SummaryInput {
  return { dir, session: 's1', runId: 'run-2', maxRounds: 3, hasWorker: true, validate, ...over };
}

describe('summarizeSession', () => {
  it('summarizeSession - stops at the first converged round; a later round left from an older run is not counted', () => {
    put(sessionFiles.criteria, criteria);
    round(1, 'iterate', [4, 5], { tasks: ['T1', 'T2'] });
    round(2, 'converged', [8, 9]);
    round(3, 'iterate', [1, 1]);
    const s = summarizeSession(input());
    expect(s.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(s.stopped).toEqual({ reason: 'converged', round: 2 });
    expect(s.final_verdict).toBe('converged');
    expect(s.next_tasks).toEqual([]);
    expect(s.rounds[0]?.next_tasks.map((t) => t.id)).toEqual(['T1', 'T2']);
    expect(s.rounds[0]?.judges.map((j) => j.name)).toEqual(['a', 'b']);
    expect(validate('refine-summary', s)).toBeUndefined();
  });

  it("summarizeSession - without a worker only round 1 counts and its next tasks are the session's", () => {
    put(sessionFiles.criteria, criteria);
    round(1, 'iterate', [4, 5], { tasks: ['T1', 'T2', 'T3'] });
    round(2, 'iterate', [6, 6]);
    const s = summarizeSession(input({ hasWorker: false }));
    expect(s.rounds).toHaveLength(1);
    expect(s.stopped).toEqual({ reason: 'no_worker', round: 1 });
    expect(s.next_tasks.map((t) => t.id)).toEqual(['T1', 'T2', 'T3']);
  });

  it('summarizeSession - with a worker, max_rounds rounds hand work over and one final round scores it; a missing round is incomplete', () => {
    round(1, 'iterate', [4, 5]);
    round(2, 'iterate', [5, 5]);
    round(3, 'iterate', [6, 6]);
    expect(summarizeSession(input({ maxRounds: 1 })).stopped).toEqual({ reason: 'max_rounds', round: 2 });
    expect(summarizeSession(input({ maxRounds: 2 })).stopped).toEqual({ reason: 'max_rounds', round: 3 });
    expect(summarizeSession(input({ maxRounds: 3 })).stopped).toEqual({ reason: 'incomplete', round: 3 });
    expect(roundLimit({ maxRounds: 3, hasWorker: true })).toBe(4);
    expect(roundLimit({ maxRounds: 3, hasWorker: false })).toBe(1);
  });

  it('summarizeSession - an invalid or unreadable artifact becomes a warning, never a crash', () => {
    put(sessionFiles.criteria, '{ not json');
    round(1, 'iterate', [4, 5]);
    put(sessionFiles.judgeFile(1, 'a', 'verdict.json'), { verdict: 'maybe' });
    const s = summarizeSession(input({ hasWorker: false }));
    expect(s.warnings.join('\n')).toMatch(/criteria\.json: not valid JSON/);
    expect(s.warnings.join('\n')).toMatch(/judges\/a\/verdict\.json: does not match schema verdict/);
    expect(s.rounds[0]?.judges.find((j) => j.name === 'a')).toMatchObject({ status: 'missing', verdict: null });
    expect(validate('refine-summary', s)).toBeUndefined();
  });

  it('summarizeSession - usage adds up per round and per session; this_run counts only the current run; cached calls keep their original cost', () => {
    put(sessionFiles.criteria, criteria);
    put(sessionFiles.criteriaUsage, usage('criteria', 'run-1', 0.5));
    round(1, 'iterate', [4, 5], { runId: 'run-1' });
    put(sessionFiles.judgeFile(1, 'a', 'usage.json'), usage('rounds#1.evaluate[a]', 'run-2', 0.02, true));
    const s = summarizeSession(input({ hasWorker: false }));
    expect(s.rounds[0]?.usage).toMatchObject({ calls: 3, cached_calls: 1, cost_usd: 0.03, original_cost_usd: 0.05 });
    expect(s.usage.total).toMatchObject({ calls: 4, cost_usd: 0.53, original_cost_usd: 0.55, input_tokens: 400, output_tokens: 200 });
    expect(s.usage.this_run).toMatchObject({ calls: 1, cached_calls: 1, cost_usd: 0, original_cost_usd: 0.02 });
  });

  it('summarizeSession - a degraded round keeps its reason and has no scores', () => {
    put(
      sessionFiles.roundFile(1, 'verdict.json'),
      degradedVerdict('run budget exhausted (--budget-usd): $0.1 spent', { backend: 'consensus:vote' }, 1),
    );
    const s = summarizeSession(input({ hasWorker: false, judges: ['a'] }));
    expect(s.rounds[0]).toMatchObject({
      status: 'degraded',
      degraded_reason: expect.stringContaining('budget'),
      scores: {},
      next_tasks_status: 'missing',
    });
    expect(s.rounds[0]?.judges).toEqual([{ name: 'a', verdict: null, status: 'missing', scores: {} }]);
    expect(renderSummaryMarkdown(s)).toContain('| 1 | iterate (degraded) |');
  });
});

describe('renderSummaryMarkdown', () => {
  it('renderSummaryMarkdown - one xychart-beta line chart per criterion, scores in round order; table, winners and next tasks listed', () => {
    put(sessionFiles.criteria, criteria);
    round(1, 'iterate', [4, 5], { tasks: ['T1'] });
    round(2, 'iterate', [6, 7], { tasks: ['T7', 'T8'] });
    const md = renderSummaryMarkdown(summarizeSession(input({ maxRounds: 1 })));
    const charts = [...md.matchAll(/```mermaid\nxychart-beta\n([\s\S]*?)```/g)]
      .map((m) => m[1] as string)
      .filter((c) => c.includes('y-axis "score"'));
    expect(charts).toHaveLength(2);
    expect(charts[0]).toContain('title "E1 Clarity"');
    expect(charts[0]).toContain('x-axis ["R1", "R2"]');
    expect(charts[0]).toContain('line [4, 6]');
    expect(charts[1]).toContain('line [5, 7]');
    expect(md).toContain('| **E1** Clarity (primary) | 4 | 6 |');
    expect(md).toContain('**ITERATE** after 2 rounds: stopped because max_rounds was reached.');
    expect(md).toContain("Round 2 is the final evaluation: it scored the worker's changes after round 1");
    expect(md).toContain('## Next tasks (round 2)');
    expect(md).toContain('1. **T7** Fix thing 1 \\| carefully _(priority high; E2)_');
    expect(md).toContain('2. **T8**');
    expect(md).toMatch(/\| whole session \| 6 \| 0 \| 600 \| 300 \| \$0\.1000 \| \$0\.1000 \|/);
  });
});

describe('judge quality in the summary', () => {
  /** Round n with judges given as name -> [verdict, scores]; the consensus takes the first judge's evaluation. */
  function judgedRound(
    n: number,
    judges: Record<string, ['iterate' | 'converged', number[]]>,
    consensus: ['iterate' | 'converged', number[]],
  ): void {
    const scores = (values: number[]) => Object.fromEntries(IDS.map((id, i) => [id, values[i] as number]));
    put(
      sessionFiles.roundFile(n, 'verdict.json'),
      verdictArtifact({ verdict: consensus[0], scores: scores(consensus[1]) }, { backend: 'consensus' }, n),
    );
    put(
      sessionFiles.roundFile(n, 'next_tasks.json'),
      consensus[0] === 'iterate' ? plan(['T1']) : placeholderNextTasks('none', 'converged'),
    );
    for (const [name, [word, values]] of Object.entries(judges))
      put(
        sessionFiles.judgeFile(n, name, 'verdict.json'),
        verdictArtifact({ verdict: word, scores: scores(values) }, { backend: name }, n),
      );
  }

  it('summarizeSession - per round and criterion the spread and pass/fail agreement; per judge the mean offset from the consensus', () => {
    put(sessionFiles.criteria, criteria);
    judgedRound(1, { mid: ['iterate', [6, 7]], harsh: ['iterate', [3, 4]], kind: ['converged', [9, 9]] }, ['iterate', [6, 7]]);
    judgedRound(2, { mid: ['iterate', [7, 7]], harsh: ['iterate', [5, 5]], kind: ['converged', [8, 10]] }, ['iterate', [7, 7]]);
    const s = summarizeSession(input({ maxRounds: 1, judges: ['mid', 'harsh', 'kind'] }));
    expect(validate('refine-summary', s)).toBeUndefined();
    expect(s.rounds[0]?.agreement).toEqual({
      judges: 3,
      verdicts_agree: 2,
      criteria: [
        { id: 'E1', judges: 3, min: 3, max: 9, spread: 6, stdev: 2.45, passing: 1, agree: 2 },
        { id: 'E2', judges: 3, min: 4, max: 9, spread: 5, stdev: 2.05, passing: 2, agree: 2 },
      ],
      offsets: [
        { judge: 'mid', criteria: 2, mean_offset: 0, mean_abs_offset: 0 },
        { judge: 'harsh', criteria: 2, mean_offset: -3, mean_abs_offset: 3 },
        { judge: 'kind', criteria: 2, mean_offset: 2.5, mean_abs_offset: 2.5 },
      ],
    });
    expect(s.judge_standings).toEqual([
      { judge: 'mid', rounds: 2, criteria: 4, mean_offset: 0, mean_abs_offset: 0 },
      { judge: 'harsh', rounds: 2, criteria: 4, mean_offset: -2.5, mean_abs_offset: 2.5 },
      { judge: 'kind', rounds: 2, criteria: 4, mean_offset: 2.25, mean_abs_offset: 2.25 },
    ]);
    const md = renderSummaryMarkdown(s);
    expect(md).toContain('| E1 | 3–9 (spread 6, σ 2.45), 2/3 agree | 5–8 (spread 3, σ 1.25), 2/3 agree |');
    expect(md).toContain('| verdict | 2/3 gave iterate | 2/3 gave iterate |');
    expect(md).toContain('| harsh | 2 | -2.50 | 2.50 | harsher than the consensus |');
    expect(md).toContain('| kind | 2 | +2.25 | 2.25 | more lenient than the consensus |');
    const chart = /```mermaid\nxychart-beta\n {2}title "Mean offset from the consensus[^\n]*\n([\s\S]*?)```/.exec(md)?.[1];
    expect(chart).toContain('x-axis ["mid", "harsh", "kind"]');
    expect(chart).toContain('y-axis "points" -3 --> 3');
    expect(chart).toContain('bar [0.00, -2.50, 2.25]');
  });

  it('standingReading - an erratic judge misses both ways though its mean offset is small', () => {
    expect(standingReading({ mean_offset: 0.2, mean_abs_offset: 2 })).toBe('in line with the consensus, erratic');
    expect(standingReading({ mean_offset: -1, mean_abs_offset: 1.2 })).toBe('harsher than the consensus');
  });

  it('summarizeSession - degraded artifacts and first tries usable are counted from the session', () => {
    put(sessionFiles.criteria, { ...criteria, source: 'default' });
    put(
      sessionFiles.roundFile(1, 'verdict.json'),
      verdictArtifact({ verdict: 'iterate', scores: { E1: 5, E2: 5 } }, { backend: 'consensus' }, 1),
    );
    put(sessionFiles.roundFile(1, 'next_tasks.json'), placeholderNextTasks('degraded', 'no usable plan'));
    put(sessionFiles.judgeFile(1, 'a', 'verdict.json'), degradedVerdict('malformed output after one repair retry: x', { backend: 'a' }, 1));
    const recorder = new UsageRecorder();
    const base = {
      backend: 'a',
      model: 'm',
      inputTokens: 1,
      outputTokens: 1,
      costUsd: 0,
      originalCostUsd: 0,
      latencyMs: 1,
      cached: false,
      attempts: 1,
    };
    recorder.add({ ...base, tag: 'evaluate.r1', schema: 'response_format', valid: false });
    recorder.add({ ...base, tag: 'repair-evaluate.r1', schema: 'response_format', valid: false });
    put(sessionFiles.judgeFile(1, 'a', 'usage.json'), recorder.artifact('rounds#1.evaluate[a]', 'run-2'));
    const s = summarizeSession(input({ hasWorker: false, judges: ['a'] }));
    expect(validate('refine-summary', s)).toBeUndefined();
    expect(s.answers).toEqual({
      first_try: 1,
      first_try_valid: 0,
      repairs: 1,
      degraded_artifacts: ['criteria.json', 'round_001/next_tasks.json', 'round_001/judges/a/verdict.json'],
      backends: [{ backend: 'a', calls: 2, schema: { response_format: 2 }, first_try: 1, first_try_valid: 0 }],
    });
    // No usable judge: nothing to compare.
    expect(s.rounds[0]?.agreement).toBeNull();
  });
});

describe('UsageRecorder', () => {
  it('UsageRecorder - calls sorted by tag then backend; totals add cached calls at $0 with their original cost', () => {
    const r = new UsageRecorder();
    const base = { model: 'm', inputTokens: 10, outputTokens: 5, latencyMs: 1, attempts: 1 };
    r.add({ ...base, backend: 'z', tag: 'vote.r1', costUsd: 0.1, originalCostUsd: 0.1, cached: false });
    r.add({ ...base, backend: 'a', tag: 'vote.r1', costUsd: 0, originalCostUsd: 0.2, cached: true });
    r.add({ ...base, backend: 'q', tag: 'evaluate.r1', costUsd: 0.3, originalCostUsd: 0.3, cached: false });
    const a = r.artifact('stage', 'run');
    expect(a.calls.map((c) => `${c.tag}/${c.backend}`)).toEqual(['evaluate.r1/q', 'vote.r1/a', 'vote.r1/z']);
    expect(a.totals).toEqual({ calls: 3, cached_calls: 1, input_tokens: 30, output_tokens: 15, cost_usd: 0.4, original_cost_usd: 0.6 });
    expect(validate('llm-usage', a)).toBeUndefined();
  });
});
