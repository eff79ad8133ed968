import { describe, expect, it } from 'vitest';
import { checkVerdict } from '../../../src/workflows/refine/verdict.ts';
import { checkNextTasks, OVERRIDE_PLACEHOLDER } from '../../../src/workflows/refine/next-tasks.ts';
import { parseEvaluation, salvageVerdictBlock } from '../../../src/workflows/refine/evaluation.ts';
import { filesFromEvaluation, degradedFiles } from '../../../src/workflows/refine/evaluation-files.ts';
import { PACKET_SECTIONS, SUMMARY_HEADING } from '../../../src/workflows/refine/critique.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { evaluationAnswer, evaluationObject, nextTasksJson } from '../../integration/refine/helpers/answers.ts';

const ids = ['E1', 'E2', 'E3'];
const registry = new SchemaRegistry(process.cwd());

describe('checkVerdict', () => {
  it('checkVerdict - trims and lower-cases the verdict and truncates scores like int()', () => {
    const out = checkVerdict({ verdict: ' Converged ', scores: { E1: 7.9, E2: 8, E3: 10 } }, ids);
    expect(out).toEqual({ ok: true, value: { verdict: 'converged', scores: { E1: 7, E2: 8, E3: 10 } } });
  });

  it('checkVerdict - booleans, missing criteria, unknown criteria and out-of-range scores are reasons', () => {
    const out = checkVerdict({ verdict: 'done', scores: { E1: true, E3: 11, E9: 5 } }, ids);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.reasons).toEqual([
      '"verdict" must be "iterate" or "converged", got "done"',
      'scores.E1 is missing or not a number',
      'scores.E2 is missing or not a number',
      'scores.E3 = 11 is outside 1-10',
      'scores has unknown criteria E9; the criteria are E1, E2, E3',
    ]);
  });
});

describe('checkNextTasks', () => {
  it('checkNextTasks - the full shape passes and validates against next-tasks.schema.json', () => {
    const out = checkNextTasks(nextTasksJson(ids));
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value.tasks).toHaveLength(2);
    expect(registry.validate('next-tasks', out.value)).toEqual({ ok: true });
  });

  it('checkNextTasks - success_contract, ceiling_status and task fields are required', () => {
    const payload = nextTasksJson(ids) as Record<string, unknown>;
    const out = checkNextTasks({
      ...payload,
      success_contract: { outcome_statement: 'x', quality_bar: '', fail_if_any: [], required_evidence: ['e'] },
      approach_assessment: { ceiling_status: 'unknown' },
      tasks: [{ id: 'T1', description: 'd', verification: 'v', success_criteria: 's', failure_signals: [], required_evidence: ['e'] }],
    });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.reasons).toEqual([
      'success_contract.quality_bar must be non-empty',
      'success_contract.fail_if_any must be non-empty',
      'approach_assessment.ceiling_status must be one of ceiling_not_reached, ceiling_approaching, ceiling_reached',
      'tasks[0].failure_signals needs at least one item',
    ]);
  });

  it('checkNextTasks - thesis_shift needs a thesis_shift task', () => {
    const out = checkNextTasks({ ...nextTasksJson(ids), strategy_mode: 'thesis_shift' });
    expect(out).toEqual({ ok: false, reasons: ['strategy_mode is thesis_shift but no task has strategy_role "thesis_shift"'] });
  });

  it('checkNextTasks - tasks default to fix_tasks + evolution_tasks; the override reason is filled near the ceiling', () => {
    const base = nextTasksJson(ids);
    const [fix, evolution] = base.tasks;
    const out = checkNextTasks({
      ...base,
      tasks: undefined,
      fix_tasks: [fix],
      evolution_tasks: [{ ...evolution, metadata: { verification: 'from metadata' } }],
      approach_assessment: { ...base.approach_assessment, ceiling_status: 'ceiling_approaching' },
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value.tasks.map((t) => t.id)).toEqual(['T1', 'T2']);
    expect(out.value.incremental_override_reason).toBe(OVERRIDE_PLACEHOLDER);
    expect(registry.validate('next-tasks', out.value)).toEqual({ ok: true });
  });
});

describe('parseEvaluation', () => {
  it('parseEvaluation - a complete iterate answer yields three schema-valid artifacts with the spec sections', () => {
    const parsed = parseEvaluation(evaluationAnswer({ ids, scores: 5 }), ids);
    expect(parsed.ok && parsed.complete).toBe(true);
    if (!parsed.ok) return;
    const files = filesFromEvaluation(parsed.value, { backend: 'j1' }, 2);
    expect(registry.validate('verdict', files.verdict)).toEqual({ ok: true });
    expect(registry.validate('next-tasks', files.nextTasks)).toEqual({ ok: true });
    const headings = [...files.packet.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([...PACKET_SECTIONS, 'Evaluation Summary']);
    expect(files.packet).toContain('**Verdict**: ITERATE');
    expect(files.packet).toContain('### per_criterion_spec');
    expect(files.verdict).toMatchObject({ status: 'ok', round: 2, judge: { backend: 'j1' } });
  });

  it('parseEvaluation - converged ignores next_tasks and writes a none placeholder', () => {
    const text = JSON.stringify({ ...evaluationObject({ ids, verdict: 'converged', scores: 9 }), next_tasks: { junk: true } });
    const parsed = parseEvaluation(text, ids);
    expect(parsed.ok && parsed.complete).toBe(true);
    if (!parsed.ok) return;
    expect(filesFromEvaluation(parsed.value, undefined).nextTasks).toMatchObject({ status: 'none' });
  });

  it('parseEvaluation - iterate with a broken plan is usable but incomplete, with the reason', () => {
    const text = JSON.stringify({ ...evaluationObject({ ids }), next_tasks: { strategy_mode: 'incremental_refinement' } });
    const parsed = parseEvaluation(text, ids);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.complete).toBe(false);
    expect(parsed.problems[0]).toContain('success_contract is required');
    const files = filesFromEvaluation(parsed.value, undefined);
    expect(files.nextTasks).toMatchObject({ status: 'degraded' });
    expect(registry.validate('next-tasks', files.nextTasks)).toEqual({ ok: true });
  });

  it('parseEvaluation - missing findings or scores is malformed', () => {
    const obj = evaluationObject({ ids });
    expect(parseEvaluation(JSON.stringify({ ...obj, critique: { summary: {} } }), ids)).toEqual({
      ok: false,
      reasons: ['critique.criterion_findings is required'],
    });
    expect(parseEvaluation('The deliverable is fine. 8/10.', ids)).toMatchObject({ ok: false });
  });

  it('salvageVerdictBlock - a ```json verdict_block fence gives the verdict and the rest as the packet', () => {
    const text = `# Review\n\nGood work.\n\n\`\`\`json verdict_block\n{"verdict": "iterate", "scores": {"E1": 5, "E2": 6, "E3": 7}}\n\`\`\`\n`;
    const out = salvageVerdictBlock(text, ids);
    expect(out?.verdict.scores).toEqual({ E1: 5, E2: 6, E3: 7 });
    expect(out?.packet).toBe('# Review\n\nGood work.');
  });

  it('degradedFiles - iterate with no scores, the reason in all three artifacts, all schema-valid', () => {
    const files = degradedFiles('malformed output after one repair retry: x', 'raw ```text``` ~~~~', { backend: 'j' }, 1);
    expect(registry.validate('verdict', files.verdict)).toEqual({ ok: true });
    expect(registry.validate('next-tasks', files.nextTasks)).toEqual({ ok: true });
    expect(files.verdict).toMatchObject({
      verdict: 'iterate',
      scores: {},
      status: 'degraded',
      degraded_reason: 'malformed output after one repair retry: x',
    });
    expect(files.packet).toContain('**Reason**: malformed output');
    expect(files.packet).toContain(SUMMARY_HEADING);
  });
});
