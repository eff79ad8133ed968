import { describe, expect, it } from 'vitest';
import { deriveResult, parseGuardAnswer, type Dimension } from '../../../src/workflows/refine/regression.ts';
import { aggregate } from '../../../src/workflows/refine/consensus/aggregate.ts';
import { answerLabels, judgeForLabel } from '../../../src/workflows/refine/consensus/labels.ts';
import { parseVoteReply } from '../../../src/workflows/refine/consensus/vote-parse.ts';
import { isVoteStale } from '../../../src/workflows/refine/consensus/votes.ts';
import { parseEvaluation } from '../../../src/workflows/refine/evaluation.ts';
import { filesFromEvaluation } from '../../../src/workflows/refine/evaluation-files.ts';
import { seededShuffle } from '../../../src/workflows/refine/seeded.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { evaluationAnswer } from '../../integration/refine/helpers/answers.ts';

const ids = ['E1', 'E2', 'E3'];
const dim = (criterion: string, stronger: Dimension['stronger'], difference: Dimension['difference'] = 'marginal'): Dimension => ({
  criterion,
  answer_a_score: 5,
  answer_b_score: 5,
  stronger,
  difference,
  evidence: '',
});

describe('deriveResult', () => {
  it('deriveResult - candidate wins or ties on most with no substantial loss: pass', () => {
    expect(deriveResult([dim('E1', 'B'), dim('E2', 'equivalent'), dim('E3', 'A', 'marginal')], 'B')).toBe('pass');
  });
  it('deriveResult - a substantial loss and no win: fail; losing on most: fail', () => {
    expect(deriveResult([dim('E1', 'A', 'substantial'), dim('E2', 'equivalent'), dim('E3', 'equivalent')], 'B')).toBe('fail');
    expect(deriveResult([dim('E1', 'B'), dim('E2', 'B'), dim('E3', 'A')], 'A')).toBe('fail');
  });
  it('deriveResult - a substantial loss beside a win: mixed', () => {
    expect(deriveResult([dim('E1', 'A', 'substantial'), dim('E2', 'B'), dim('E3', 'equivalent')], 'B')).toBe('mixed');
  });
});

describe('parseGuardAnswer', () => {
  it('parseGuardAnswer - orders dimensions by criteria and derives the win lists', () => {
    const text = JSON.stringify({
      summary: 's',
      dimensions: [
        { criterion: 'E2', answer_a_score: 4, answer_b_score: 8, stronger: 'b', difference: 'Substantial', evidence: 'x' },
        { criterion: 'E1', answer_a_score: 8, answer_b_score: 6, stronger: 'A', difference: 'marginal', evidence: 'y' },
        { criterion: 'E3', answer_a_score: 5, answer_b_score: 5, stronger: 'Equivalent', difference: 'marginal', evidence: 'z' },
      ],
    });
    const out = parseGuardAnswer(text, ids);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value.dimensions.map((d) => d.criterion)).toEqual(ids);
    expect(out.value).toMatchObject({ answer_a_wins: ['E1'], answer_b_wins: ['E2'], equivalent: ['E3'] });
  });
  it('parseGuardAnswer - a missing criterion is a reason', () => {
    const text = JSON.stringify({
      summary: 's',
      dimensions: [{ criterion: 'E1', answer_a_score: 1, answer_b_score: 2, stronger: 'B', difference: 'marginal', evidence: '' }],
    });
    expect(parseGuardAnswer(text, ids)).toEqual({ ok: false, reasons: ['no dimension for E2, E3'] });
  });
});

describe('aggregate', () => {
  const files = (scores: Record<string, number>, verdict: 'iterate' | 'converged', judge: string) => {
    const parsed = parseEvaluation(evaluationAnswer({ ids, scores, verdict, note: judge }), ids);
    if (!parsed.ok) throw new Error('fixture');
    return { judge, files: filesFromEvaluation(parsed.value, { backend: judge }) };
  };
  const registry = new SchemaRegistry(process.cwd());

  it('aggregate - harshest takes the per-criterion minimum and iterates unless all converged', () => {
    const out = aggregate(
      [
        files({ E1: 8, E2: 4, E3: 9 }, 'converged', 'a'),
        files({ E1: 6, E2: 7, E3: 9 }, 'iterate', 'b'),
        files({ E1: 9, E2: 9, E3: 9 }, 'converged', 'c'),
      ],
      'harshest',
      ids,
    );
    expect(out.verdict).toMatchObject({
      verdict: 'iterate',
      scores: { E1: 6, E2: 4, E3: 9 },
      aggregate: { mode: 'harshest', judges: ['a', 'b', 'c'] },
    });
    expect(out.nextTasks.status).toBe('ok');
    expect(out.packet).toContain('### Evaluator B\n\n- **E1**: Finding for E1 (b).');
    expect(registry.validate('verdict', out.verdict)).toEqual({ ok: true });
  });

  it('aggregate - mean rounds and converges when more than half converge', () => {
    const out = aggregate(
      [
        files({ E1: 8, E2: 7, E3: 9 }, 'converged', 'a'),
        files({ E1: 7, E2: 8, E3: 8 }, 'converged', 'b'),
        files({ E1: 4, E2: 4, E3: 4 }, 'iterate', 'c'),
      ],
      'mean',
      ids,
    );
    expect(out.verdict).toMatchObject({ verdict: 'converged', scores: { E1: 6, E2: 6, E3: 7 } });
    expect(out.nextTasks).toMatchObject({ status: 'none' });
  });
});

describe('votes and labels', () => {
  it('isVoteStale - empty seen is stale; a newer answer than seen is stale; otherwise fresh', () => {
    const vote = { voter: 'a', target: 'b', reason: '', round: 2, seen: { a: 1, b: 1 } };
    expect(isVoteStale({ ...vote, seen: {} }, { a: 1 })).toBe(true);
    expect(isVoteStale(vote, { a: 1, b: 2 })).toBe(true);
    expect(isVoteStale(vote, { a: 1, b: 1 })).toBe(false);
    expect(isVoteStale(vote, { a: 1, b: 1, c: 1 })).toBe(true);
  });

  it('parseVoteReply - accepts "answer B" style labels and rejects labels not shown', () => {
    const labels = answerLabels(['zed', 'amy', 'bob']);
    expect([...labels.entries()]).toEqual([
      ['amy', 'A'],
      ['bob', 'B'],
      ['zed', 'C'],
    ]);
    expect(judgeForLabel(labels, 'Answer-c')).toBe('zed');
    const shown = new Set(['amy', 'bob']);
    expect(parseVoteReply('{"action":"vote","target":"answer B","reason":"r"}', labels, shown, ids)).toMatchObject({
      ok: true,
      value: { kind: 'vote', target: 'bob' },
    });
    expect(parseVoteReply('{"action":"vote","target":"C"}', labels, shown, ids)).toEqual({
      ok: false,
      reasons: ['"target" must be one of A, B, got "C"'],
    });
    expect(parseVoteReply('{"action":"abstain"}', labels, shown, ids)).toMatchObject({ ok: false });
  });

  it('seededShuffle - the same seed gives the same order, different judges get different orders', () => {
    const items = ['A', 'B', 'C', 'D', 'E', 'F'];
    expect(seededShuffle(items, 'j1|2')).toEqual(seededShuffle(items, 'j1|2'));
    const orders = new Set(['j1', 'j2', 'j3', 'j4'].map((j) => seededShuffle(items, `${j}|2`).join('')));
    expect(orders.size).toBeGreaterThan(1);
    expect(seededShuffle(items, 'x').sort()).toEqual(items);
  });
});
