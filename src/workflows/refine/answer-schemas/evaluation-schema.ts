import { choice, closed, keyed, listOf, nullable, score, text, texts, type AnswerSchema, type Schema } from './strict-parts.ts';

const CEILING = ['ceiling_not_reached', 'ceiling_approaching', 'ceiling_reached'];

/** MassGen's next_tasks.json (schema 2, the shape its validator accepts), closed; relates_to names real criteria. */
export function nextTasksSchema(ids: readonly string[]): Schema {
  const task = closed({
    id: text,
    task_category: choice(['fix', 'evolution']),
    strategy_role: nullable(choice(['thesis_shift', 'supporting_fix'])),
    description: text,
    implementation_guidance: text,
    priority: choice(['high', 'medium', 'low']),
    depends_on: texts(),
    verification: text,
    success_criteria: text,
    failure_signals: texts({ min: 1 }),
    required_evidence: texts({ min: 1 }),
    metadata: closed({ impact: choice(['incremental', 'structural', 'transformative']), relates_to: listOf(choice(ids)) }),
  });
  return closed({
    objective: text,
    primary_strategy: text,
    why_this_strategy: text,
    strategy_mode: choice(['incremental_refinement', 'thesis_shift']),
    incremental_override_reason: nullable(text),
    success_contract: closed({
      outcome_statement: text,
      quality_bar: text,
      fail_if_any: texts({ min: 1 }),
      required_evidence: texts({ min: 1 }),
    }),
    approach_assessment: closed({
      ceiling_status: choice(CEILING),
      ceiling_explanation: text,
      breakthroughs: listOf(closed({ element: text, why: text, amplification: text })),
      paradigm_shift: closed({
        recommended: { type: 'boolean' },
        current_limitation: text,
        alternative_approach: text,
        transferable_elements: texts(),
      }),
    }),
    deprioritize_or_remove: texts(),
    tasks: listOf(task, { min: 1 }),
    evolved_prompt: nullable(closed({ prompt: text, evolution_rationale: text })),
  });
}

/** The critique_packet.md sections as JSON: findings and per-criterion steps keyed by the session's criteria. */
export function critiqueSchema(ids: readonly string[]): Schema {
  return closed({
    criteria_interpretation: text,
    criterion_findings: keyed(ids, text),
    cross_answer_synthesis: text,
    unexplored_approaches: texts({ min: 1, max: 3 }),
    approach_assessment: text,
    preserve: texts(),
    improvement_spec: closed({
      objective: text,
      quality_bar: text,
      execution_order: texts(),
      per_criterion_spec: keyed(ids, closed({ concrete_steps: texts({ min: 1 }) })),
      cross_cutting_changes: texts(),
      preserve_invariants: texts(),
      anti_goals: texts(),
      deliverable_expectations: texts(),
    }),
    verification_plan: texts(),
    evidence_gaps: texts(),
    summary: closed({ top_improvements: listOf(closed({ description: text, guidance: text })), preserve: texts(), next_steps: text }),
  });
}

/** One judge's evaluation: a score (integer 1-10) for exactly the session's criteria, the critique, the plan. */
export function evaluationSchema(ids: readonly string[]): Schema {
  return closed({
    verdict: choice(['iterate', 'converged']),
    scores: keyed(ids, score()),
    critique: critiqueSchema(ids),
    next_tasks: nullable(nextTasksSchema(ids)),
  });
}

export function evaluationAnswerSchema(ids: readonly string[]): AnswerSchema {
  return { name: 'evaluation', schema: evaluationSchema(ids) };
}
