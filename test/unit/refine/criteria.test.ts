import { describe, expect, it } from 'vitest';
import { parseCriteriaResponse } from '../../../src/workflows/refine/criteria-parse.ts';
import { criteriaFromUserData, CriteriaFileError } from '../../../src/workflows/refine/criteria-file.ts';
import { DEFAULT_CRITERIA, mapCategory } from '../../../src/workflows/refine/criteria.ts';
import { extractJson } from '../../../src/workflows/refine/json-extract.ts';
import { toEvalCriteriaFile, toMassgenChecklist } from '../../../src/workflows/refine/criteria-export.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT } from '../../helpers/project.ts';
import { criteriaAnswer } from '../../integration/refine/helpers/answers.ts';

describe('extractJson', () => {
  it('extractJson - whole text, fence, then brace scan from the marker', () => {
    expect(extractJson('{"a":1}')).toMatchObject({ ok: true, via: 'direct' });
    expect(extractJson('Here:\n```json\n{"a":2}\n```\nbye')).toMatchObject({ ok: true, value: { a: 2 }, via: 'fence' });
    expect(extractJson('noise {"x": {"criteria": oops} and {"criteria": [1, "}"]} tail', /\{\s*"criteria"/)).toMatchObject({
      ok: true,
      value: { criteria: [1, '}'] },
      via: 'scan',
    });
  });

  it('extractJson - trailing commas are forgiven; plain prose is not JSON', () => {
    expect(extractJson('{"a": [1, 2,],}')).toMatchObject({ ok: true, value: { a: [1, 2] } });
    expect(extractJson('I think the answer is good.')).toMatchObject({ ok: false });
    expect(extractJson('   ')).toMatchObject({ ok: false, reason: 'the answer is empty' });
  });
});

describe('parseCriteriaResponse', () => {
  it('parseCriteriaResponse - assigns positional ids E1..EN and keeps anchors and anti-patterns', () => {
    const parsed = parseCriteriaResponse(criteriaAnswer(5));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.criteria.map((c) => c.id)).toEqual(['E1', 'E2', 'E3', 'E4', 'E5']);
    expect(parsed.criteria[0]).toMatchObject({ category: 'primary', anti_patterns: ['vague claims', 'walls of text'] });
    expect(parsed.criteria[4]?.category).toBe('stretch');
    expect(parsed.criteria[0]?.score_anchors).toEqual({ '3': 'weak', '5': 'adequate', '7': 'good', '9': 'excellent' });
    expect(parsed.aspiration).toContain('newcomer');
  });

  it('parseCriteriaResponse - more than one primary: the first is kept, the others demoted', () => {
    const parsed = parseCriteriaResponse(criteriaAnswer(5, 3));
    expect(parsed.ok && parsed.criteria.map((c) => c.category)).toEqual(['primary', 'standard', 'standard', 'standard', 'stretch']);
    expect(parsed.ok && parsed.notes[0]).toContain('2 extra');
  });

  it('parseCriteriaResponse - a count outside 4-7 is rejected with the bounds', () => {
    expect(parseCriteriaResponse(criteriaAnswer(3))).toEqual({ ok: false, reason: '3 criteria; between 4 and 7 are required' });
    expect(parseCriteriaResponse(criteriaAnswer(8))).toMatchObject({ ok: false });
  });

  it('parseCriteriaResponse - fenced output inside prose parses; legacy categories map', () => {
    const body = JSON.stringify({
      criteria: ['must', 'should', 'could', 'core'].map((category, i) => ({ description: `D${i}`, category })),
    });
    const parsed = parseCriteriaResponse(`Sure! Here are the criteria:\n\`\`\`json\n${body}\n\`\`\``);
    expect(parsed.ok && parsed.criteria.map((c) => c.category)).toEqual(['standard', 'standard', 'stretch', 'standard']);
    expect(parsed.ok && parsed.criteria[0]?.text).toBe('D0');
  });

  it('parseCriteriaResponse - an item without text is rejected', () => {
    const body = JSON.stringify({ criteria: [{ text: 'a' }, { category: 'primary' }, { text: 'c' }, { text: 'd' }] });
    expect(parseCriteriaResponse(body)).toEqual({ ok: false, reason: 'criteria[1] has no "text"' });
  });
});

describe('criteriaFromUserData', () => {
  it('criteriaFromUserData - bare array, description preferred over name, ids positional', () => {
    const criteria = criteriaFromUserData(
      [
        { id: 'x9', name: 'N', description: 'Desc' },
        { text: 'T', category: 'primary' },
      ],
      'c.json',
    );
    expect(criteria).toEqual([
      { id: 'E1', text: 'Desc', category: 'standard' },
      { id: 'E2', text: 'T', category: 'primary' },
    ]);
  });

  it("criteriaFromUserData - refine's weights map to primary / standard / stretch", () => {
    const criteria = criteriaFromUserData(
      {
        criteria: [
          { name: 'a', weight: 2 },
          { name: 'b', weight: 5 },
          { name: 'c', weight: 1 },
          { name: 'd', weight: 3 },
        ],
      },
      'c.json',
    );
    expect(criteria.map((c) => c.category)).toEqual(['stretch', 'primary', 'stretch', 'standard']);
  });

  it('criteriaFromUserData - a bad item names the file, the place and the fix', () => {
    expect(() => criteriaFromUserData({ criteria: [{ text: 'ok' }, { weight: 1 }] }, 'my-criteria.json')).toThrowError(CriteriaFileError);
    expect(() => criteriaFromUserData({ criteria: [{ text: 'ok' }, { weight: 1 }] }, 'my-criteria.json')).toThrowError(
      /my-criteria\.json: criteria\[1\]: needs a non-empty "text"/,
    );
    expect(() => criteriaFromUserData({ items: [] }, 'f.json')).toThrowError(/expected a JSON array or an object with a "criteria" array/);
  });

  it('DEFAULT_CRITERIA - four defaults with E3 primary, as in MassGen', () => {
    expect(DEFAULT_CRITERIA.map((c) => `${c.id}:${c.category}`)).toEqual(['E1:standard', 'E2:standard', 'E3:primary', 'E4:standard']);
    expect(mapCategory(' Primary ')).toBe('primary');
  });

  it("DEFAULT_CRITERIA - MassGen's aspects, each with anti-patterns and score anchors for 3, 5, 7 and 9", () => {
    expect(DEFAULT_CRITERIA.map((c) => c.text.split(':')[0])).toEqual([
      'Requirements fidelity',
      'Multi-level correctness',
      'Per-part depth',
      'Intentional craft',
    ]);
    for (const c of DEFAULT_CRITERIA) {
      expect(c.anti_patterns?.length, c.id).toBeGreaterThanOrEqual(2);
      expect(Object.keys(c.score_anchors ?? {}), c.id).toEqual(['3', '5', '7', '9']);
      expect(Object.values(c.score_anchors ?? {}).every((v) => v.trim().length > 0)).toBe(true);
    }
    const doc = { schema_version: '1', source: 'default', criteria: DEFAULT_CRITERIA };
    expect(new SchemaRegistry(REPO_ROOT).validate('eval-criteria', doc)).toEqual({ ok: true });
  });
});

describe('criteria export', () => {
  const criteria = criteriaFromUserData(JSON.parse(criteriaAnswer(4)), 'x.json');

  it('toMassgenChecklist - the bare array of {id, text, category, rationale} the quality server indexes as a list', () => {
    const list = toMassgenChecklist(criteria);
    expect(Array.isArray(list)).toBe(true);
    expect(list.map((c) => Object.keys(c))).toEqual(criteria.map(() => ['id', 'text', 'category', 'rationale']));
    expect(list.map((c) => c.id)).toEqual(['E1', 'E2', 'E3', 'E4']);
  });

  it('toEvalCriteriaFile - the wrapped form --eval-criteria reads: text first, anchors and anti-patterns kept, no ids (MassGen numbers them)', () => {
    const file = toEvalCriteriaFile(DEFAULT_CRITERIA);
    expect(file.criteria).toHaveLength(4);
    expect(file.criteria[2]).toMatchObject({
      text: DEFAULT_CRITERIA[2]?.text,
      category: 'primary',
      score_anchors: DEFAULT_CRITERIA[2]?.score_anchors,
    });
    expect(file.criteria.every((c) => !('id' in c))).toBe(true);
    // Read back the way refinery (and MassGen's criteria_from_inline) reads it.
    expect(criteriaFromUserData(file, 'exported.json')).toEqual(DEFAULT_CRITERIA);
  });
});
