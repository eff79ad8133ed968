import { describe, expect, it } from 'vitest';
import { checkFindings, contradiction, resolvePointer } from '../../../src/workflows/massgen/self-analysis/evidence-check.ts';

const facts = { overview: { votes: 3, totalCostUsd: 0.1234 }, agents: [{ id: 'agent_a' }], 'a/b': { '~x': true } };
const lines = new Map([['attempt_1/massgen.log', 10]]);

describe('evidence check', () => {
  it('resolvePointer - RFC 6901 escapes and array indices; a missing key or a non-pointer fails', () => {
    expect(resolvePointer(facts, '/agents/0/id')).toEqual({ ok: true, value: 'agent_a' });
    expect(resolvePointer(facts, '/a~1b/~0x')).toEqual({ ok: true, value: true });
    expect(resolvePointer(facts, '/agents/1')).toMatchObject({ ok: false });
    expect(resolvePointer(facts, 'overview.votes')).toMatchObject({ ok: false });
  });

  it('contradiction - numbers compared to the digits given; strings case-insensitively', () => {
    expect(contradiction('/v', 0.1234, '0.12')).toBeUndefined();
    expect(contradiction('/v', 0.1234, '$0.1234')).toBeUndefined();
    expect(contradiction('/v', 3, '4')).toBe('claims /v is 4, but analysis.json has 3');
    expect(contradiction('/v', 'Completed', 'completed')).toBeUndefined();
    expect(contradiction('/v', { a: 1 }, 'anything')).toBeUndefined();
  });

  it('checkFindings - a finding stands only when every piece of its evidence holds', () => {
    const ok = {
      severity: 'low' as const,
      claim: 'c',
      evidence: [
        { fact: '/overview/votes', value: '3' },
        { file: 'attempt_1/massgen.log', lines: [2, 10] as [number, number] },
      ],
    };
    const beyond = { ...ok, evidence: [{ file: 'attempt_1/massgen.log', lines: [9, 11] as [number, number] }] };
    const outside = { ...ok, evidence: [{ file: '../secret.txt', lines: [1, 1] as [number, number] }] };
    const result = checkFindings([ok, beyond, outside], facts, lines);
    expect(result.verified).toEqual([ok]);
    expect(result.unverified.map((u) => u.reasons[0])).toEqual([
      'lines 9-11 are beyond the end of attempt_1/massgen.log (10 line(s))',
      'file ../secret.txt is not a file of this turn',
    ]);
  });
});
