import type { Criterion } from '../criteria.ts';
import { judgingBrief } from './criteria-block.ts';

export interface EvalPromptInput {
  task?: string;
  criteria: readonly Criterion[];
  deliverable: string;
  round: number;
  /** Earlier rounds' critique packets, oldest first, with the round each came from. */
  history: readonly { round: number; text: string }[];
}

/** The evaluation JSON a judge must reply with, under the given heading (the exact schema is sent with the call). */
export const EVALUATION_OUTPUT_CONTRACT = (criteria: readonly Criterion[], heading = '## Required output') => {
  const ids = criteria.map((c) => c.id);
  const byId = (value: string) => `{ ${ids.map((id) => `"${id}": ${value}`).join(', ')} }`;
  return `${heading}

Reply with ONLY one JSON object (no prose around it, no code fence). Every key below is required; where a
value may be null it says so.

{
  "verdict": "iterate" | "converged",
  "scores": ${byId('n')},            // one integer 1-10 per criterion, every criterion, no other key
  "critique": {
    "criteria_interpretation": "...",
    "criterion_findings": ${byId('"evidence-based finding"')},
    "cross_answer_synthesis": "...",
    "unexplored_approaches": ["1-3 ideas"],
    "approach_assessment": "...",
    "preserve": ["what must survive the next round"],
    "improvement_spec": { "objective": "...", "quality_bar": "...", "execution_order": ["..."],
      "per_criterion_spec": ${byId('{ "concrete_steps": ["..."] }')}, "cross_cutting_changes": ["..."],
      "preserve_invariants": ["..."], "anti_goals": ["..."], "deliverable_expectations": ["..."] },
    "verification_plan": ["..."],
    "evidence_gaps": ["..."],
    "summary": { "top_improvements": [{ "description": "...", "guidance": "..." }], "preserve": ["..."], "next_steps": "..." }
  },
  "next_tasks": null when converged, else {
    "objective": "...", "primary_strategy": "...", "why_this_strategy": "...",
    "strategy_mode": "incremental_refinement" | "thesis_shift",
    "incremental_override_reason": "why incremental despite an approaching ceiling" | null,
    "success_contract": { "outcome_statement": "...", "quality_bar": "...", "fail_if_any": ["..."], "required_evidence": ["..."] },
    "approach_assessment": { "ceiling_status": "ceiling_not_reached" | "ceiling_approaching" | "ceiling_reached",
      "ceiling_explanation": "...", "breakthroughs": [{ "element": "...", "why": "...", "amplification": "..." }],
      "paradigm_shift": { "recommended": false, "current_limitation": "...", "alternative_approach": "...", "transferable_elements": [] } },
    "deprioritize_or_remove": ["..."],
    "tasks": [{ "id": "T1", "task_category": "fix" | "evolution", "strategy_role": "thesis_shift" | "supporting_fix" | null,
      "description": "...", "implementation_guidance": "...", "priority": "high" | "medium" | "low", "depends_on": [],
      "verification": "...", "success_criteria": "...", "failure_signals": ["..."], "required_evidence": ["..."],
      "metadata": { "impact": "incremental" | "structural" | "transformative", "relates_to": ["${ids[0] ?? 'E1'}"] } }],
    "evolved_prompt": { "prompt": "a rewrite of the original task", "evolution_rationale": "..." } | null
  }
}

Rules: scores only in "scores" (no numbers in the prose); default to "iterate" (first drafts are 6s, not 8s);
with "thesis_shift" at least one task has strategy_role "thesis_shift"; include at least one evolution task.`;
};

/** The round-evaluator prompt (MassGen's template, condensed), deliverable content included. */
export function evalPrompt(input: EvalPromptInput): string {
  const history = input.history.length
    ? `## Prior evaluations (oldest first)\n\n${input.history.map((h) => `<prior_evaluation round="${h.round}">\n${h.text.trim()}\n</prior_evaluation>`).join('\n\n')}\n`
    : '';
  return [
    'You are the round evaluator: a critic, spec writer and strategic advisor, not an implementer.',
    'Be demanding: ground every finding in observable evidence from the files below; a demanding user must be satisfied before "converged".',
    '',
    `# Evaluation round ${input.round}`,
    '',
    ...judgingBrief(input.task, input.criteria, input.deliverable),
    history,
    EVALUATION_OUTPUT_CONTRACT(input.criteria),
  ]
    .filter((part) => part !== '')
    .join('\n');
}
