// How a round's consensus was reached, in one sentence: forced or not, after how many consensus rounds,
// with how many votes, the winner by which rule, and whose answer from which round the verdict and scores
// are. consensus.json carries it (`decision`), and SUMMARY.md and the dashboard show it as written, so the
// three never tell different stories.

import type { VoteRule } from './types.ts';

/** A vote mode's rule, or the per-criterion synthesis of harshest/mean mode. */
export type DecidedBy = VoteRule | 'harshest' | 'mean';

export interface DecisionFacts {
  decided_by: DecidedBy;
  forced: boolean;
  forced_reason?: string;
  /** Consensus rounds played, round 1 (the judges' evaluations) included. */
  consensus_rounds: number;
  /** Votes cast over all consensus rounds, fresh or not. */
  votes_cast: number;
  /** Fresh votes per judge at the end. */
  tally: Readonly<Record<string, number>>;
  judges: number;
  /** Whose answer the verdict and scores are; `step` counts that judge's answers (1: its evaluation). */
  source: { judge: string; round: number; step: number } | null;
}

const FORCED_BY: Record<string, string> = {
  max_rounds: 'by max_rounds',
  timeout: 'by the time limit',
  budget: 'because the budget was spent',
  no_answers: 'because no judge answered',
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function ordinal(n: number): string {
  const tail = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${tail}`;
}

/** "judge-a's round-1 evaluation" or "judge-a's new answer from consensus round 3 (its 3rd answer)". */
export function sourceText(source: NonNullable<DecisionFacts['source']>): string {
  if (source.round === 1 && source.step === 1) return `${source.judge}'s round-1 evaluation`;
  return `${source.judge}'s answer from consensus round ${source.round} (its ${ordinal(source.step)} answer, given instead of a vote)`;
}

function roundsText(n: number): string {
  return n > 1
    ? `${plural(n, 'consensus round')} (round 1: the judges' evaluations; ${n === 2 ? 'round 2' : `rounds 2-${n}`}: voting)`
    : '1 consensus round (the evaluations)';
}

function votesText(facts: DecisionFacts): string {
  const fresh = Object.values(facts.tally).reduce((a, b) => a + b, 0);
  if (facts.votes_cast === 0) return 'with no votes';
  if (fresh === 0) return `with ${plural(facts.votes_cast, 'vote')} cast, none of them fresh (a later answer made each stale)`;
  return `with ${fresh} fresh ${fresh === 1 ? 'vote' : 'votes'} of ${plural(facts.votes_cast, 'vote')} cast and no majority`;
}

function ruleText(facts: DecisionFacts, winner: string): string {
  const count = facts.tally[winner] ?? 0;
  switch (facts.decided_by) {
    case 'majority':
      return `${winner} won with ${count} of ${facts.judges} fresh votes (more than half)`;
    case 'plurality':
      return `${winner} won by the plurality rule: the most fresh votes (${count}), ties going to the first judge in registration order`;
    case 'first_answer':
      return `${winner} won by the first-answer rule: without a fresh vote, the judge whose first answer came earliest wins, ties going to the first judge in registration order`;
    default:
      return `${winner} won`;
  }
}

/** The sentence for consensus.json's `decision`. */
export function decisionText(facts: DecisionFacts): string {
  switch (facts.decided_by) {
    case 'harshest':
      return "No vote (harshest mode): each criterion's score is the lowest any judge gave, and the verdict is iterate unless every judge said converged.";
    case 'mean':
      return "No vote (mean mode): each criterion's score is the rounded mean of the judges' scores, and the verdict is converged when more than half of the judges said so.";
    case 'none':
      return 'No judge produced a usable evaluation: the verdict is degraded.';
    case 'single_judge':
      return `One judge, so no vote: the verdict and scores are ${facts.source ? sourceText(facts.source) : 'its evaluation'}.`;
  }
  const winner = facts.source?.judge ?? '?';
  const how = facts.forced
    ? `Consensus was forced ${FORCED_BY[facts.forced_reason ?? ''] ?? `(${facts.forced_reason})`} after ${roundsText(facts.consensus_rounds)} ${votesText(facts)}`
    : `The judges agreed after ${roundsText(facts.consensus_rounds)}`;
  const used = facts.source ? `the verdict and scores are ${sourceText(facts.source)}` : 'no answer was used';
  return `${how}: ${ruleText(facts, winner)}; ${used}.`;
}
