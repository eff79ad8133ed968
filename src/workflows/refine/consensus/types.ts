/** A judge's seat; `index` is its registration order (the tie-break order). */
export interface JudgeSeat {
  name: string;
  backend: string;
  index: number;
}

export interface AnswerRecord<A> {
  judge: string;
  /** Per-judge step number (1 = its round-1 evaluation). */
  step: number;
  round: number;
  answer: A;
}

export interface VoteRecord {
  voter: string;
  /** The judge whose latest answer is voted for. */
  target: string;
  reason: string;
  round: number;
  /** Latest answer step of every judge with an answer, snapshotted when the voter was launched. */
  seen: Record<string, number>;
}

export type JudgeAction<A> =
  | { kind: 'vote'; target: string; reason: string }
  | { kind: 'answer'; answer: A }
  | { kind: 'none'; why: 'timeout' | 'degraded' | 'budget'; detail: string };

/** What one judge is shown in a voting round. */
export interface RoundView<A> {
  round: number;
  /** Latest answer of every judge that has one, at launch. */
  answers: ReadonlyArray<AnswerRecord<A>>;
}

export interface RoundLog {
  round: number;
  launched: string[];
  answers: string[];
  votes: Array<{ voter: string; target: string; reason: string; fresh: boolean }>;
  idle: Array<{ judge: string; why: 'timeout' | 'degraded' | 'budget'; detail: string }>;
}

export type ForcedReason = 'max_rounds' | 'timeout' | 'budget' | 'no_answers';

/**
 * The rule that picked the winner: more than half the fresh votes (`majority`); when consensus is forced,
 * the most fresh votes, ties by registration order (`plurality`), or without any fresh vote the judge whose
 * first answer came earliest, ties by registration order (`first_answer`); `single_judge` when only one judge
 * sits; `none` when no judge has an answer.
 */
export type VoteRule = 'majority' | 'plurality' | 'first_answer' | 'single_judge' | 'none';

export interface ConsensusOutcome<A> {
  /** Winner judge name, or undefined when nobody produced an answer. */
  winner: string | undefined;
  winnerAnswer: AnswerRecord<A> | undefined;
  forced: boolean;
  forcedReason: ForcedReason | undefined;
  decidedBy: VoteRule;
  rounds: RoundLog[];
  /** Every answer given (round-1 evaluations and new answers in later rounds), in the order given. */
  answers: Array<AnswerRecord<A>>;
  /** Fresh votes at the end. */
  votes: VoteRecord[];
  staleVotes: VoteRecord[];
  tally: Record<string, number>;
}
