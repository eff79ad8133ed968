import type { Criterion } from '../criteria.ts';
import { judgingBrief } from './criteria-block.ts';
import { EVALUATION_OUTPUT_CONTRACT } from './eval-prompt.ts';

export interface LabeledAnswer {
  label: string;
  /** verdict.json, critique_packet.md and next_tasks.json of that answer, as text. */
  body: string;
}

/** A voting round: the evaluations so far, anonymized, in this judge's own order. */
export function votePrompt(input: {
  task?: string;
  criteria: readonly Criterion[];
  deliverable: string;
  round: number;
  answers: readonly LabeledAnswer[];
}): string {
  const labels = input.answers.map((a) => a.label).join(', ');
  return [
    'You are one of several evaluators of the same deliverable. Below are the current evaluations, anonymized.',
    'Either VOTE for the evaluation that is most accurate, evidence-based and useful for the next round,',
    'or, if none is good enough, write a NEW evaluation. Judge the evaluations, not their authors.',
    '',
    `# Consensus round ${input.round}`,
    '',
    ...judgingBrief(input.task, input.criteria, input.deliverable),
    '## Current evaluations',
    '',
    ...input.answers.map((a) => `<evaluation label="${a.label}">\n${a.body.trim()}\n</evaluation>\n`),
    '## Required output',
    '',
    'Reply with ONLY one JSON object, no prose, no code fence. Either a vote:',
    `{"action": "vote", "target": "<one of ${labels}>", "reason": "why this evaluation is the best"}`,
    'or a new evaluation:',
    '{"action": "new_answer", "evaluation": <the evaluation object described below>}',
    '',
    EVALUATION_OUTPUT_CONTRACT(input.criteria, '### Evaluation object'),
  ]
    .filter((part) => part !== '')
    .join('\n');
}
