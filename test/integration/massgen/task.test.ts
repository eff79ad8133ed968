import { createRunBudget } from '../../../src/engine/executor/budget.ts';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import task, { resolveTurnPath } from '../../../tasks/analyze-turn.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import type { TaskContext, TaskReport } from '../../../src/task/define-task.ts';
import { FIXTURES } from './fixture-truth.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');

function context(
  root: string,
  turn: string,
  reports: TaskReport[],
): TaskContext<{ turn: string; staleAfterSeconds: number; maxJsonMb: number }> {
  const staging = mkdtempSync(path.join(tmpdir(), 'staging-'));
  const controller = new AbortController();
  return {
    budget: createRunBudget(undefined),
    params: task.params.parse({ turn }) as { turn: string; staleAfterSeconds: number; maxJsonMb: number },
    root,
    stage: 'task:analyze-turn',
    runId: 'test',
    inputs: [],
    outputs: { analysis: path.join(staging, 'analysis.json'), report: path.join(staging, 'ANALYSIS_REPORT.md') },
    outputTargets: { analysis: `${turn}/analysis.json`, report: `${turn}/ANALYSIS_REPORT.md` },
    env: {},
    $: undefined as never,
    signal: controller.signal,
    cacheDir: () => staging,
    log: () => {},
    progress: () => {},
    report: (r) => reports.push(r),
  };
}

describe('analyze-turn task', () => {
  it('analyze-turn - writes a schema-valid analysis and the report to the staging paths', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'project-'));
    cpSync(path.join(FIXTURES, 'massgen-v0191/enforcement'), path.join(root, 'logs'), { recursive: true });
    const log = 'logs/log_20261130_064813_612627/turn_1';
    const reports: TaskReport[] = [];
    const ctx = context(root, log, reports);
    const result = await task.run(ctx);
    const analysis = JSON.parse(readFileSync(ctx.outputs.analysis as string, 'utf8')) as { winner: { agentId: string } };
    expect(new SchemaRegistry(REPO).validate('turn-analysis', analysis)).toEqual({ ok: true });
    expect(analysis.winner.agentId).toBe('agent_a');
    expect(readFileSync(ctx.outputs.report as string, 'utf8')).toContain('# MassGen Log Analysis Report');
    expect(result?.summary).toContain('completed, winner agent_a');
    expect(reports.some((r) => r.kind === 'metric' && r.name === 'massgen.votes' && r.value === 4)).toBe(true);
  });

  it('analyze-turn - a legacy flat log dir is analyzed as one unit', async () => {
    const legacy = path.join(FIXTURES, 'massgen-real/.massgen/massgen_logs/log_20251026_001748');
    const ctx = context(REPO, legacy, []);
    await task.run(ctx);
    const analysis = JSON.parse(readFileSync(ctx.outputs.analysis as string, 'utf8')) as { source: { turnDir: null; layout: string } };
    expect(analysis.source).toMatchObject({ turnDir: null, layout: 'flat' });
  });

  it('resolveTurnPath - relative paths resolve against the root, out of it too (the turn is only read); a missing dir names the problem', async () => {
    expect(resolveTurnPath('/proj', '../downloads/massgen_logs/log_1/turn_1')).toBe('/downloads/massgen_logs/log_1/turn_1');
    expect(resolveTurnPath('/proj', 'a/turn_1')).toBe('/proj/a/turn_1');
    expect(() => resolveTurnPath('/proj', 'a\0b')).toThrow(/NUL byte/);
    const ctx = context(mkdtempSync(path.join(tmpdir(), 'p-')), 'nowhere/turn_3', []);
    await expect(task.run(ctx)).rejects.toThrow(/does not exist/);
  });
});
