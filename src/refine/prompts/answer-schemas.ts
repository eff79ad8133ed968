/** JSON Schemas sent as `response_format` where the backend supports it (not strict: guidance only). */

const stringOrList = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'object' }] };

export const NEXT_TASKS_SHAPE = {
  type: 'object',
  required: ['strategy_mode', 'success_contract', 'approach_assessment', 'tasks'],
  properties: {
    objective: { type: 'string' },
    primary_strategy: { type: 'string' },
    why_this_strategy: { type: 'string' },
    strategy_mode: { enum: ['incremental_refinement', 'thesis_shift'] },
    incremental_override_reason: { type: 'string' },
    success_contract: {
      type: 'object',
      required: ['outcome_statement', 'quality_bar', 'fail_if_any', 'required_evidence'],
      properties: {
        outcome_statement: { type: 'string' },
        quality_bar: { type: 'string' },
        fail_if_any: { type: 'array', items: { type: 'string' } },
        required_evidence: { type: 'array', items: { type: 'string' } },
      },
    },
    approach_assessment: {
      type: 'object',
      required: ['ceiling_status'],
      properties: {
        ceiling_status: { enum: ['ceiling_not_reached', 'ceiling_approaching', 'ceiling_reached'] },
        ceiling_explanation: { type: 'string' },
        breakthroughs: { type: 'array', items: { type: 'object' } },
        paradigm_shift: { type: 'object' },
      },
    },
    deprioritize_or_remove: { type: 'array', items: { type: 'string' } },
    tasks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'description', 'verification', 'success_criteria', 'failure_signals', 'required_evidence'],
        properties: {
          id: { type: 'string' },
          task_category: { enum: ['fix', 'evolution'] },
          strategy_role: { enum: ['thesis_shift', 'supporting_fix'] },
          description: { type: 'string' },
          implementation_guidance: { type: 'string' },
          priority: { type: 'string' },
          depends_on: { type: 'array', items: { type: 'string' } },
          verification: { type: 'string' },
          success_criteria: { type: 'string' },
          failure_signals: { type: 'array', items: { type: 'string' } },
          required_evidence: { type: 'array', items: { type: 'string' } },
          metadata: { type: 'object' },
        },
      },
    },
    evolved_prompt: { type: 'object' },
  },
};

export const EVALUATION_ANSWER_SCHEMA = {
  type: 'object',
  required: ['verdict', 'scores', 'critique'],
  properties: {
    verdict: { enum: ['iterate', 'converged'] },
    scores: { type: 'object', additionalProperties: { type: 'integer', minimum: 1, maximum: 10 } },
    critique: {
      type: 'object',
      required: ['criterion_findings', 'summary'],
      properties: {
        criteria_interpretation: stringOrList,
        criterion_findings: stringOrList,
        cross_answer_synthesis: stringOrList,
        unexplored_approaches: { type: 'array', items: { type: 'string' } },
        approach_assessment: stringOrList,
        preserve: { type: 'array', items: { type: 'string' } },
        improvement_spec: { type: 'object' },
        verification_plan: stringOrList,
        evidence_gaps: stringOrList,
        summary: {
          type: 'object',
          properties: {
            top_improvements: { type: 'array', items: { type: 'object', properties: { description: { type: 'string' }, guidance: { type: 'string' } } } },
            preserve: { type: 'array', items: { type: 'string' } },
            next_steps: { type: 'string' },
          },
        },
      },
    },
    next_tasks: { anyOf: [NEXT_TASKS_SHAPE, { type: 'null' }] },
  },
};

export const VOTE_ANSWER_SCHEMA = {
  type: 'object',
  required: ['action'],
  properties: {
    action: { enum: ['vote', 'new_answer'] },
    target: { type: 'string' },
    reason: { type: 'string' },
    evaluation: EVALUATION_ANSWER_SCHEMA,
  },
};

export const REGRESSION_ANSWER_SCHEMA = {
  type: 'object',
  required: ['summary', 'dimensions'],
  properties: {
    summary: { type: 'string' },
    dimensions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['criterion', 'answer_a_score', 'answer_b_score', 'stronger', 'difference', 'evidence'],
        properties: {
          criterion: { type: 'string' },
          answer_a_score: { type: 'integer', minimum: 1, maximum: 10 },
          answer_b_score: { type: 'integer', minimum: 1, maximum: 10 },
          stronger: { enum: ['A', 'B', 'equivalent'] },
          difference: { enum: ['substantial', 'marginal'] },
          evidence: { type: 'string' },
        },
      },
    },
  },
};
