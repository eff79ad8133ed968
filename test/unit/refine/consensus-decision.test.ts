import { describe, expect, it } from 'vitest';
import { decisionText, type DecisionFacts } from '../../../src/workflows/refine/consensus/decision.ts';

const base: DecisionFacts = {
  decided_by: 'majority',
  forced: false,
  consensus_rounds: 2,
  votes_cast: 3,
  tally: { b: 2, a: 1 },
  judges: 3,
  source: { judge: 'b', round: 1, step: 1 },
};

describe('decisionText', () => {
  it('decisionText - a majority: who won with how many votes, and that the scores are its round-1 evaluation', () => {
    expect(decisionText(base)).toBe(
      "The judges agreed after 2 consensus rounds (round 1: the judges' evaluations; round 2: voting): b won with 2 of 3 fresh votes (more than half); the verdict and scores are b's round-1 evaluation.",
    );
  });

  it('decisionText - forced with split votes: the plurality rule and the vote counts', () => {
    const text = decisionText({
      ...base,
      decided_by: 'plurality',
      forced: true,
      forced_reason: 'max_rounds',
      consensus_rounds: 3,
      votes_cast: 6,
      tally: { b: 1, a: 1 },
    });
    expect(text).toMatch(
      /^Consensus was forced by max_rounds after 3 consensus rounds .* with 2 fresh votes of 6 votes cast and no majority: b won by the plurality rule/,
    );
  });

  it('decisionText - forced when every vote went stale: says so, and names the new answer the scores come from', () => {
    const text = decisionText({
      ...base,
      decided_by: 'first_answer',
      forced: true,
      forced_reason: 'budget',
      votes_cast: 2,
      tally: {},
      source: { judge: 'a', round: 2, step: 2 },
    });
    expect(text).toContain('forced because the budget was spent');
    expect(text).toContain('with 2 votes cast, none of them fresh');
    expect(text).toContain('first-answer rule');
    expect(text).toContain("the verdict and scores are a's answer from consensus round 2 (its 2nd answer, given instead of a vote)");
  });

  it('decisionText - harshest, mean, one judge and no usable answer each say so without a vote', () => {
    expect(decisionText({ ...base, decided_by: 'harshest', source: null })).toMatch(/^No vote \(harshest mode\): .*lowest/);
    expect(decisionText({ ...base, decided_by: 'mean', source: null })).toMatch(/^No vote \(mean mode\): .*rounded mean/);
    expect(decisionText({ ...base, decided_by: 'single_judge' })).toBe(
      "One judge, so no vote: the verdict and scores are b's round-1 evaluation.",
    );
    expect(decisionText({ ...base, decided_by: 'none', source: null })).toMatch(/No judge produced a usable evaluation/);
  });
});
