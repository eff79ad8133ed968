// Canned judge answers in the evaluation JSON format the prompts ask for: each fits the call's exact
// answer schema (src/refine/answer-schemas), every key present, nulls where a value is absent.

export interface AnswerSpec {
  ids: readonly string[];
  verdict?: 'iterate' | 'converged';
  /** One score for all, or per id. */
  scores?: number | Record<string, number>;
  note?: string;
}

export function nextTasksJson(ids: readonly string[]) {
  return {
    objective: 'Make every section carry real evidence',
    primary_strategy: 'Rebuild the weakest section around measured examples',
    why_this_strategy: 'The weakest part sets the ceiling',
    strategy_mode: 'incremental_refinement',
    incremental_override_reason: null,
    success_contract: {
      outcome_statement: 'Every claim is backed by a runnable example',
      quality_bar: 'A reviewer finds no unsupported claim',
      fail_if_any: ['an example does not run'],
      required_evidence: ['output of each example'],
    },
    approach_assessment: {
      ceiling_status: 'ceiling_not_reached',
      ceiling_explanation: 'Structure is sound; depth is missing',
      breakthroughs: [{ element: 'the intro', why: 'clear', amplification: 'use its style throughout' }],
      paradigm_shift: { recommended: false, current_limitation: '', alternative_approach: '', transferable_elements: [] },
    },
    deprioritize_or_remove: [],
    tasks: [
      {
        id: 'T1',
        task_category: 'fix',
        strategy_role: 'supporting_fix',
        description: 'Add a runnable example to the usage section',
        implementation_guidance: 'One command and its output',
        priority: 'high',
        depends_on: [],
        verification: 'Run the example',
        success_criteria: 'The example runs and prints the shown output',
        failure_signals: ['the output differs'],
        required_evidence: ['terminal transcript'],
        metadata: { impact: 'structural', relates_to: [ids[0] ?? 'E1'] },
      },
      {
        id: 'T2',
        task_category: 'evolution',
        strategy_role: null,
        description: 'Explain the design choice behind the cache key',
        implementation_guidance: 'One paragraph under the design section',
        priority: 'medium',
        depends_on: ['T1'],
        verification: 'Read the section',
        success_criteria: 'A reader can predict when the cache misses',
        failure_signals: ['the reader cannot say what invalidates the cache'],
        required_evidence: ['the new paragraph'],
        metadata: { impact: 'incremental', relates_to: [ids[1] ?? 'E1'] },
      },
    ],
    evolved_prompt: null,
  };
}

export function evaluationObject(spec: AnswerSpec) {
  const verdict = spec.verdict ?? 'iterate';
  const scores = Object.fromEntries(spec.ids.map((id) => [id, typeof spec.scores === 'number' ? spec.scores : (spec.scores?.[id] ?? 6)]));
  return {
    verdict,
    scores,
    critique: {
      criteria_interpretation: 'Read the criteria literally.',
      criterion_findings: Object.fromEntries(spec.ids.map((id) => [id, `Finding for ${id}${spec.note ? ` (${spec.note})` : ''}.`])),
      cross_answer_synthesis: 'Single answer.',
      unexplored_approaches: ['Lead with a worked example'],
      approach_assessment: 'Sound structure, shallow evidence.',
      preserve: ['The opening paragraph'],
      improvement_spec: {
        objective: 'Add evidence',
        quality_bar: 'Every claim shown',
        execution_order: ['examples', 'explanations'],
        per_criterion_spec: Object.fromEntries(spec.ids.map((id) => [id, { concrete_steps: [`Improve ${id}`] }])),
        cross_cutting_changes: ['Consistent terminology'],
        preserve_invariants: ['Section order'],
        anti_goals: ['Padding'],
        deliverable_expectations: ['Same files'],
      },
      verification_plan: ['Run every example'],
      evidence_gaps: ['No benchmark numbers'],
      summary: {
        top_improvements: [{ description: 'Add runnable examples', guidance: 'one per section' }],
        preserve: ['The opening paragraph'],
        next_steps: 'Rewrite the usage section.',
      },
    },
    next_tasks: verdict === 'iterate' ? nextTasksJson(spec.ids) : null,
  };
}

export function evaluationAnswer(spec: AnswerSpec): string {
  return JSON.stringify(evaluationObject(spec));
}

export function voteAnswer(target: string, reason = 'most evidence-based'): string {
  return JSON.stringify({ action: 'vote', target, reason, evaluation: null });
}

export function criteriaAnswer(count: number, primaries = 1): string {
  return JSON.stringify({
    aspiration: 'a README a newcomer can act on in five minutes',
    criteria: Array.from({ length: count }, (_, i) => ({
      id: `E${i + 1}`,
      text: `Aspect ${i + 1}: an opinionated definition`,
      category: i < primaries ? 'primary' : i === count - 1 ? 'stretch' : 'standard',
      anti_patterns: ['vague claims', 'walls of text'],
      verify_by: null,
      score_anchors: { '3': 'weak', '5': 'adequate', '7': 'good', '9': 'excellent' },
    })),
  });
}
