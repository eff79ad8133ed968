import { describe, expect, it } from 'vitest';
import { strictSchemaProblems } from '../../../src/workflows/backends/strict-schema.ts';
import { evaluationAnswerSchema } from '../../../src/workflows/refine/answer-schemas/evaluation-schema.ts';
import {
  criteriaAnswerSchema,
  regressionAnswerSchema,
  voteAnswerSchema,
} from '../../../src/workflows/refine/answer-schemas/call-schemas.ts';

const closed = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

describe('strictSchemaProblems (OpenAI strict subset)', () => {
  it('strictSchemaProblems - a closed object with every property required, nullable unions, enums and bounds fits', () => {
    const schema = closed({
      verdict: { type: 'string', enum: ['iterate', 'converged'] },
      score: { type: 'integer', minimum: 1, maximum: 10 },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      tags: { type: 'array', items: { type: 'string', pattern: '^E[0-9]+$' }, minItems: 1, maxItems: 3 },
      nested: closed({ ok: { type: 'boolean' }, when: { type: ['string', 'null'], format: 'date-time' } }),
    });
    expect(strictSchemaProblems(schema)).toEqual([]);
  });

  it('strictSchemaProblems - an open object, an optional property, a keyword outside the subset and a root anyOf are each named', () => {
    expect(strictSchemaProblems({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })).toEqual([
      '/: additionalProperties must be false',
    ]);
    expect(
      strictSchemaProblems({
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        required: ['a'],
        additionalProperties: false,
      }),
    ).toEqual(['/: every property must be required; not required: b']);
    expect(strictSchemaProblems(closed({ scores: { type: 'object', additionalProperties: { type: 'integer' } } }))).toEqual([
      '/properties/scores: additionalProperties must be false',
      '/properties/scores: an object needs properties',
    ]);
    expect(strictSchemaProblems(closed({ name: { type: 'string', minLength: 1 } }))).toEqual([
      "/properties/name: keyword 'minLength' is not supported for type string",
    ]);
    expect(strictSchemaProblems(closed({ x: { not: { type: 'null' } } }))).toContain("/properties/x: keyword 'not' is not supported");
    expect(strictSchemaProblems({ anyOf: [closed({ a: { type: 'string' } })] })).toContain('/: the root must not be anyOf');
    expect(strictSchemaProblems(closed({ when: { type: 'string', format: 'uri' } }))).toEqual([
      "/properties/when: format 'uri' is not supported",
    ]);
  });

  it('strictSchemaProblems - more than 10 levels of objects and more than 1,000 enum values are refused', () => {
    let deep: Record<string, unknown> = closed({ leaf: { type: 'string' } });
    for (let i = 0; i < 10; i++) deep = closed({ inner: deep });
    expect(strictSchemaProblems(deep).some((p) => p.includes('nest deeper than 10'))).toBe(true);
    const many = closed({ pick: { type: 'string', enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } });
    expect(strictSchemaProblems(many)).toEqual(['/: 1001 enum values in all; at most 1000']);
  });

  it('answer schemas - every schema refinery sends fits the strict subset, for every criteria count and label set', () => {
    for (let n = 1; n <= 7; n++) {
      const ids = Array.from({ length: n }, (_, i) => `E${i + 1}`);
      const labels = ['A', 'B', 'C', 'D', 'E'].slice(0, Math.max(1, n - 2));
      for (const schema of [
        evaluationAnswerSchema(ids),
        voteAnswerSchema(ids, labels),
        regressionAnswerSchema(ids),
        criteriaAnswerSchema({ min: 4, max: 7 }),
      ]) {
        expect(strictSchemaProblems(schema.schema), `${schema.name} with ${n} criteria`).toEqual([]);
        expect(schema.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      }
    }
  });
});
