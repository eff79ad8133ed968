import { describe, expect, it } from 'vitest';
import { validateAgainst } from '../../../src/engine/artifacts/schema-registry.ts';
import { evaluationAnswerSchema } from '../../../src/workflows/refine/answer-schemas/evaluation-schema.ts';
import {
  criteriaAnswerSchema,
  regressionAnswerSchema,
  voteAnswerSchema,
} from '../../../src/workflows/refine/answer-schemas/call-schemas.ts';
import { criteriaAnswer, evaluationObject } from '../../integration/refine/helpers/answers.ts';
import { exampleFromSchema } from '../../helpers/schema-responders.ts';

const IDS = ['E1', 'E2', 'E3'];
const problems = (schema: Record<string, unknown>, data: unknown): string[] => {
  const r = validateAgainst(schema, data);
  return r.ok ? [] : r.issues.map((i) => `${i.pointer} ${i.message}`);
};

describe('answer schemas built from the session', () => {
  it("evaluationAnswerSchema - the session's criteria are the required keys of scores, integers 1-10, and no other key", () => {
    const { schema } = evaluationAnswerSchema(IDS);
    const good = evaluationObject({ ids: IDS, scores: 6 });
    expect(problems(schema, good)).toEqual([]);
    expect(problems(schema, { ...good, scores: { E1: 6, E3: 6 } })).toContain("/scores is missing required property 'E2'");
    expect(problems(schema, { ...good, scores: { E1: 6, E2: 6, E3: 6, E9: 6 } })).toContain("/scores has unknown property 'E9'");
    expect(problems(schema, { ...good, scores: { E1: 11, E2: 6.5, E3: 6 } })).toEqual(
      expect.arrayContaining(['/scores/E1 must be <= 10', '/scores/E2 must be integer']),
    );
    expect(problems(schema, { ...good, critique: { ...good.critique, criterion_findings: { E1: 'x' } } })).toContain(
      "/critique/criterion_findings is missing required property 'E2'",
    );
    expect(problems(schema, evaluationObject({ ids: IDS, verdict: 'converged' }))).toEqual([]);
  });

  it('evaluationAnswerSchema - a task relates only to criteria of the session', () => {
    const { schema } = evaluationAnswerSchema(IDS);
    const answer = evaluationObject({ ids: IDS });
    answer.next_tasks!.tasks[0]!.metadata.relates_to = ['E7'];
    expect(
      problems(schema, answer).some((p) =>
        p.startsWith('/next_tasks/tasks/0/metadata/relates_to/0 must be equal to one of the allowed values'),
      ),
    ).toBe(true);
  });

  it("regressionAnswerSchema - criterion is an enum of the session's ids, one dimension per criterion", () => {
    const { schema } = regressionAnswerSchema(IDS);
    const dim = (criterion: string) => ({
      criterion,
      answer_a_score: 5,
      answer_b_score: 7,
      stronger: 'B',
      difference: 'marginal',
      evidence: 'e',
    });
    expect(problems(schema, { summary: 's', dimensions: IDS.map(dim) })).toEqual([]);
    expect(problems(schema, { summary: 's', dimensions: ['E1', 'E2', 'E4'].map(dim) })).toContain(
      '/dimensions/2/criterion must be equal to one of the allowed values: ["E1","E2","E3"]',
    );
    expect(problems(schema, { summary: 's', dimensions: ['E1', 'E2'].map(dim) })).toContain('/dimensions must NOT have fewer than 3 items');
  });

  it('voteAnswerSchema - the target is one of the labels shown, or null with a new evaluation', () => {
    const { schema } = voteAnswerSchema(IDS, ['A', 'B']);
    expect(problems(schema, { action: 'vote', target: 'B', reason: 'r', evaluation: null })).toEqual([]);
    expect(problems(schema, { action: 'vote', target: 'C', reason: 'r', evaluation: null })).toContain(
      '/target must be equal to one of the allowed values: ["A","B"]',
    );
    expect(problems(schema, { action: 'new_answer', target: null, reason: null, evaluation: evaluationObject({ ids: IDS }) })).toEqual([]);
  });

  it('criteriaAnswerSchema - 4-7 criteria, each with an E-id, a category, anti-patterns and anchors for 3/5/7/9', () => {
    const { schema } = criteriaAnswerSchema({ min: 4, max: 7 });
    expect(problems(schema, JSON.parse(criteriaAnswer(5)))).toEqual([]);
    expect(problems(schema, JSON.parse(criteriaAnswer(3)))).toContain('/criteria must NOT have fewer than 4 items');
    const bad = JSON.parse(criteriaAnswer(4));
    bad.criteria[0].id = 'C1';
    bad.criteria[1].category = 'must';
    delete bad.criteria[2].score_anchors['9'];
    expect(problems(schema, bad)).toEqual(
      expect.arrayContaining([
        '/criteria/0/id must match pattern "^E[1-9][0-9]*$"',
        '/criteria/1/category must be equal to one of the allowed values: ["standard","primary","stretch"]',
        "/criteria/2/score_anchors is missing required property '9'",
      ]),
    );
  });

  it('exampleFromSchema - the fake server derives an answer valid against each schema it may be sent', () => {
    for (const { schema } of [
      evaluationAnswerSchema(IDS),
      voteAnswerSchema(IDS, ['A', 'B']),
      regressionAnswerSchema(IDS),
      criteriaAnswerSchema({ min: 4, max: 7 }),
    ])
      expect(problems(schema, exampleFromSchema(schema))).toEqual([]);
  });
});
