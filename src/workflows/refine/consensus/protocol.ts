import { firstAnswer, isVoteStale, latestAnswerSteps, majority, plurality, tallyVotes } from './votes.ts';
import type {
  AnswerRecord,
  ConsensusOutcome,
  ForcedReason,
  JudgeAction,
  JudgeSeat,
  RoundLog,
  RoundView,
  VoteRecord,
  VoteRule,
} from './types.ts';
import { AbortFanOut, type ChildSignal } from '../../../engine/executor/abort-fan-out.ts';

export interface ProtocolOptions<A> {
  /** In registration order. */
  judges: readonly JudgeSeat[];
  /** Round-1 answers (judges whose evaluation was unusable are absent). */
  initial: ReadonlyMap<string, A>;
  /** Rounds in total, round 1 (the evaluations) included. */
  maxRounds: number;
  ask: (judge: JudgeSeat, view: RoundView<A>, signal: AbortSignal) => Promise<JudgeAction<A>>;
  signal: AbortSignal;
  /** A judge that has not acted within this many ms is idle for the round. */
  roundTimeoutMs?: number;
  /** Absolute time (Date.now()) after which consensus is forced. */
  deadline?: number;
  budgetExhausted?: () => boolean;
}

const TIMED_OUT = Symbol('timed out');

class Session<A> {
  readonly answers = new Map<string, Array<AnswerRecord<A>>>();
  readonly votes = new Map<string, VoteRecord>();
  readonly rounds: RoundLog[] = [];
  /** Every answer, in the order given. */
  readonly given: Array<AnswerRecord<A>> = [];

  constructor(readonly options: ProtocolOptions<A>) {}

  latest(): Record<string, number> {
    return latestAnswerSteps(this.answers);
  }

  addAnswer(judge: string, round: number, answer: A): void {
    const list = this.answers.get(judge) ?? [];
    const record = { judge, step: list.length + 1, round, answer };
    list.push(record);
    this.given.push(record);
    this.answers.set(judge, list);
    this.votes.delete(judge);
  }

  split(): { fresh: VoteRecord[]; stale: VoteRecord[] } {
    const latest = this.latest();
    const all = this.options.judges.map((j) => this.votes.get(j.name)).filter((v): v is VoteRecord => v !== undefined);
    return { fresh: all.filter((v) => !isVoteStale(v, latest)), stale: all.filter((v) => isVoteStale(v, latest)) };
  }

  view(round: number): RoundView<A> {
    const answers = this.options.judges.map((j) => this.answers.get(j.name)?.at(-1)).filter((a): a is AnswerRecord<A> => a !== undefined);
    return { round, answers };
  }

  /** The winner's answer is its latest: in MassGen an agent's answer is the last one it gave. */
  outcome(winner: string | undefined, forcedReason: ForcedReason | undefined, decidedBy: VoteRule): ConsensusOutcome<A> {
    const { fresh, stale } = this.split();
    return {
      winner,
      winnerAnswer: winner ? this.answers.get(winner)?.at(-1) : undefined,
      forced: forcedReason !== undefined,
      forcedReason,
      decidedBy: winner ? decidedBy : 'none',
      rounds: this.rounds,
      answers: this.given,
      votes: fresh,
      staleVotes: stale,
      tally: tallyVotes(fresh, this.latest()),
    };
  }

  force(reason: ForcedReason): ConsensusOutcome<A> {
    const { fresh } = this.split();
    const byVotes = plurality(tallyVotes(fresh, this.latest()), this.options.judges);
    const winner = byVotes ?? firstAnswer(this.answers, this.options.judges);
    return this.outcome(winner, winner ? reason : 'no_answers', byVotes ? 'plurality' : 'first_answer');
  }
}

async function askWithTimeout<A>(
  options: ProtocolOptions<A>,
  judge: JudgeSeat,
  view: RoundView<A>,
  own: ChildSignal,
): Promise<JudgeAction<A>> {
  const limits = [options.roundTimeoutMs, options.deadline !== undefined ? options.deadline - Date.now() : undefined].filter(
    (v): v is number => v !== undefined,
  );
  const limit = limits.length > 0 ? Math.max(0, Math.min(...limits)) : undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    if (limit !== undefined) timer = setTimeout(() => resolve(TIMED_OUT), limit);
  });
  try {
    const result = await Promise.race([options.ask(judge, view, own.signal), timeout]);
    if (result !== TIMED_OUT) return result;
    own.abort(new Error('round timeout'));
    return { kind: 'none', why: 'timeout', detail: `no vote or answer within ${limit} ms` };
  } finally {
    if (timer) clearTimeout(timer);
    own.release();
  }
}

async function playRound<A>(session: Session<A>, round: number): Promise<void> {
  const { judges } = session.options;
  const { fresh } = session.split();
  const freshVoters = new Set(fresh.map((v) => v.voter));
  let launch = judges.filter((j) => !freshVoters.has(j.name));
  if (launch.length === 0) launch = [...judges];
  const snapshot = session.latest();
  const view = session.view(round);
  // One listener on the caller's signal for the whole round, however many judges it seats.
  const signals = new AbortFanOut(session.options.signal);
  const actions = await Promise.all(launch.map((judge) => askWithTimeout(session.options, judge, view, signals.child()))).finally(() =>
    signals.close(),
  );
  const log: RoundLog = { round, launched: launch.map((j) => j.name), answers: [], votes: [], idle: [] };
  launch.forEach((judge, i) => {
    const action = actions[i] as JudgeAction<A>;
    if (action.kind === 'answer') {
      session.addAnswer(judge.name, round, action.answer);
      log.answers.push(judge.name);
    } else if (action.kind === 'vote' && snapshot[action.target] !== undefined) {
      session.votes.set(judge.name, { voter: judge.name, target: action.target, reason: action.reason, round, seen: { ...snapshot } });
    } else if (action.kind === 'vote') {
      log.idle.push({ judge: judge.name, why: 'degraded', detail: `voted for '${action.target}', which has no answer` });
    } else log.idle.push({ judge: judge.name, why: action.why, detail: action.detail });
  });
  const latest = session.latest();
  for (const judge of launch) {
    const vote = session.votes.get(judge.name);
    if (vote?.round === round)
      log.votes.push({ voter: vote.voter, target: vote.target, reason: vote.reason, fresh: !isVoteStale(vote, latest) });
  }
  session.rounds.push(log);
}

/**
 * MassGen team step mode, driven in-process. Round 1: every evaluation is an answer. Each later round
 * relaunches the judges without a fresh vote (all of them when fresh votes are split); each sees every
 * latest answer and votes or answers anew. More than N/2 fresh votes for one answer wins. When rounds,
 * time or budget run out: most fresh votes, ties by registration order, else the first answer.
 */
export async function runConsensus<A>(options: ProtocolOptions<A>): Promise<ConsensusOutcome<A>> {
  const session = new Session(options);
  for (const judge of options.judges) {
    const answer = options.initial.get(judge.name);
    if (answer !== undefined) session.addAnswer(judge.name, 1, answer);
  }
  session.rounds.push({ round: 1, launched: options.judges.map((j) => j.name), answers: [...session.answers.keys()], votes: [], idle: [] });
  if (session.answers.size === 0) return session.outcome(undefined, 'no_answers', 'none');
  if (options.judges.length === 1) return session.outcome(options.judges[0]?.name, undefined, 'single_judge');
  for (let round = 2; round <= options.maxRounds; round++) {
    if (options.deadline !== undefined && Date.now() >= options.deadline) return session.force('timeout');
    if (options.budgetExhausted?.()) return session.force('budget');
    await playRound(session, round);
    const { fresh } = session.split();
    const winner = majority(tallyVotes(fresh, session.latest()), options.judges.length);
    if (winner) return session.outcome(winner, undefined, 'majority');
    const lastRound = session.rounds.at(-1);
    if (lastRound?.idle.some((i) => i.why === 'budget')) return session.force('budget');
    if (options.deadline !== undefined && Date.now() >= options.deadline) return session.force('timeout');
  }
  return session.force('max_rounds');
}
