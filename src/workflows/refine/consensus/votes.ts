import type { AnswerRecord, JudgeSeat, VoteRecord } from './types.ts';

/** Latest answer step per judge that has answered. */
export function latestAnswerSteps<A>(answers: ReadonlyMap<string, ReadonlyArray<AnswerRecord<A>>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [judge, list] of answers) {
    const last = list[list.length - 1];
    if (last) out[judge] = last.step;
  }
  return out;
}

/**
 * MassGen's `is_vote_stale`: stale when the vote saw nothing, or when any judge has an answer newer
 * than what the voter saw (its snapshot at launch, which avoids the save-time race).
 */
export function isVoteStale(vote: VoteRecord, latest: Readonly<Record<string, number>>): boolean {
  if (Object.keys(vote.seen).length === 0) return true;
  return Object.entries(latest).some(([judge, step]) => step > (vote.seen[judge] ?? 0));
}

/** Fresh votes counted per target; targets without an answer are ignored. */
export function tallyVotes(votes: readonly VoteRecord[], latest: Readonly<Record<string, number>>): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const vote of votes) if (latest[vote.target] !== undefined) tally[vote.target] = (tally[vote.target] ?? 0) + 1;
  return tally;
}

/** The target with more than N/2 votes, if any. */
export function majority(tally: Readonly<Record<string, number>>, seats: number): string | undefined {
  return Object.entries(tally).find(([, count]) => count > seats / 2)?.[0];
}

/** Most votes, ties broken by registration order; undefined without votes. */
export function plurality(tally: Readonly<Record<string, number>>, judges: readonly JudgeSeat[]): string | undefined {
  let best: JudgeSeat | undefined;
  let bestCount = 0;
  for (const judge of judges) {
    const count = tally[judge.name] ?? 0;
    if (count > bestCount) {
      best = judge;
      bestCount = count;
    }
  }
  return best?.name;
}

/** The first answer submitted: earliest round, then registration order. */
export function firstAnswer<A>(
  answers: ReadonlyMap<string, ReadonlyArray<AnswerRecord<A>>>,
  judges: readonly JudgeSeat[],
): string | undefined {
  let best: { judge: JudgeSeat; round: number } | undefined;
  for (const judge of judges) {
    const first = answers.get(judge.name)?.[0];
    if (first && (!best || first.round < best.round)) best = { judge, round: first.round };
  }
  return best?.judge.name;
}
