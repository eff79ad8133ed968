// The winner's final-presentation context (final/<winner>/context.txt) and its vote summary.
import type { AnswerRecord, VoteRecord } from './model.ts';
import type { PyValue } from './py-json.ts';
import { PRESENTER_PROMPT } from './texts.ts';

export function voteSummary(votesForWinner: VoteRecord[]): string {
  return `You received ${votesForWinner.length} vote(s) with feedback: ${votesForWinner.map((v) => v.reason).join('; ')}`;
}

export interface FinalContextInput {
  question: string;
  winner: string;
  summary: string;
  latest: AnswerRecord[];
  /** the current (latest) vote of each voter */
  votes: VoteRecord[];
  voteCounts: Record<string, number>;
  isTie: boolean;
  agentMapping: Record<string, string>;
}

export function finalContext(input: FinalContextInput): PyValue {
  const allAnswers = Object.fromEntries(input.latest.map((a) => [a.agent, a.text]));
  const answerLines = input.latest
    .map((a) => `${a.agent}${a.agent === input.winner ? ' (YOUR ANSWER)' : ''}: ${JSON.stringify(a.text)}`)
    .join('\n\n');
  const voterDetails: Record<string, PyValue> = {};
  for (const target of Object.keys(input.voteCounts)) {
    voterDetails[target] = input.votes.filter((v) => v.target === target).map((v) => ({ voter: v.agent, reason: v.reason }));
  }
  const allVotes = Object.fromEntries(input.votes.map((v) => [v.agent, { agent_id: v.target, reason: v.reason }]));
  return {
    messages: [
      { role: 'system', content: PRESENTER_PROMPT },
      {
        role: 'user',
        content: `<ORIGINAL MESSAGE> ${input.question} <END OF ORIGINAL MESSAGE>\n\nVOTING RESULTS:\n${input.summary}\n\nAll answers provided during coordination:\n\n${answerLines}\n\n\nUse your answer as the primary basis for the final response. You may incorporate useful details from other answers when they improve completeness or accuracy.`,
      },
    ],
    is_final: true,
    vote_summary: input.summary,
    all_answers: allAnswers,
    complete_vote_results: {
      vote_counts: input.voteCounts,
      voter_details: voterDetails,
      winner: input.winner,
      is_tie: input.isTie,
      total_votes: input.votes.length,
      agents_with_answers: input.latest.length,
      agents_voted: input.votes.length,
      agent_mapping: input.agentMapping,
    },
    vote_counts: input.voteCounts,
    voter_details: voterDetails,
    all_votes: allVotes,
  };
}
