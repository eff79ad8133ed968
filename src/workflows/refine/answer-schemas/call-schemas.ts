import { evaluationSchema } from './evaluation-schema.ts';
import { choice, closed, listOf, nullable, score, text, texts, type AnswerSchema } from './strict-parts.ts';

/**
 * The criteria writer's answer (MassGen's generator output): `min`-`max` criteria with E-ids, a category
 * each and score anchors for 3/5/7/9. "At most one primary" is outside what a strict schema can say; the
 * parser applies MassGen's rule (the first primary is kept, later ones become standard).
 */
export function criteriaAnswerSchema(bounds: { min: number; max: number }): AnswerSchema {
  const criterion = closed({
    id: { type: 'string', pattern: '^E[1-9][0-9]*$' },
    text,
    category: choice(['standard', 'primary', 'stretch']),
    anti_patterns: texts({ min: 1 }),
    verify_by: nullable(text),
    score_anchors: closed({ '3': text, '5': text, '7': text, '9': text }),
  });
  return { name: 'eval_criteria', schema: closed({ aspiration: text, criteria: listOf(criterion, { min: bounds.min, max: bounds.max }) }) };
}

/** A voting round's reply: a vote for one of the labels shown, or a new evaluation (the unused half null). */
export function voteAnswerSchema(ids: readonly string[], labels: readonly string[]): AnswerSchema {
  return {
    name: 'vote_or_answer',
    schema: closed({
      action: choice(['vote', 'new_answer']),
      target: nullable(choice(labels)),
      reason: nullable(text),
      evaluation: nullable(evaluationSchema(ids)),
    }),
  };
}

/** The regression guard's blind comparison: one dimension per criterion. */
export function regressionAnswerSchema(ids: readonly string[]): AnswerSchema {
  const dimension = closed({
    criterion: choice(ids),
    answer_a_score: score(),
    answer_b_score: score(),
    stronger: choice(['A', 'B', 'equivalent']),
    difference: choice(['substantial', 'marginal']),
    evidence: text,
  });
  return {
    name: 'regression_guard',
    schema: closed({ summary: text, dimensions: listOf(dimension, { min: ids.length, max: ids.length }) }),
  };
}
