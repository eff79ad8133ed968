import type { Criterion } from '../criteria.ts';
import { taskAndCriteria } from './criteria-block.ts';

/** MassGen's regression guard: a blind comparison of Answer A and Answer B, per criterion. */
export function regressionPrompt(input: { task?: string; criteria: readonly Criterion[]; answerA: string; answerB: string }): string {
  return [
    'You are a blind comparator. Compare Answer A and Answer B on each criterion. You do not know which one is newer;',
    'do not guess. Ground every judgement in evidence you can point to in the files.',
    '',
    ...taskAndCriteria(input.task, input.criteria),
    '## Answer A',
    '',
    input.answerA,
    '',
    '## Answer B',
    '',
    input.answerB,
    '',
    '## Required output',
    '',
    'Reply with ONLY one JSON object (no prose, no code fence), one dimension per criterion:',
    '{"summary": "...", "dimensions": [{"criterion": "E1", "answer_a_score": 8, "answer_b_score": 6, "stronger": "A" | "B" | "equivalent", "difference": "substantial" | "marginal", "evidence": "..."}]}',
  ]
    .filter((part) => part !== '')
    .join('\n');
}
