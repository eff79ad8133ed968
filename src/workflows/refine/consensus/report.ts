import type { DeliverableDigest } from '../deliverable.ts';
import type { EvaluationFiles } from '../evaluation-files.ts';
import type { JudgeInput } from './judge-inputs.ts';
import { decisionText, type DecidedBy } from './decision.ts';
import type { AnswerRecord, ConsensusOutcome, VoteRecord } from './types.ts';

/** One answer the consensus saw: a judge's round-1 evaluation, or a new answer it gave in a later round instead of voting. */
export interface AnswerLine {
  judge: string;
  label?: string;
  round: number;
  step: number;
  verdict: 'iterate' | 'converged';
  status: 'ok' | 'degraded';
  scores: Record<string, number>;
}

export interface ConsensusReport {
  schema_version: '1';
  mode: 'vote' | 'harshest' | 'mean';
  winner: { judge: string; label: string; step: number; round: number } | null;
  forced: boolean;
  forced_reason?: string;
  /** The rule that decided (vote mode), or the per-criterion synthesis (harshest/mean). */
  decided_by: DecidedBy;
  /** Whose answer the verdict and scores are (vote mode); null when they are a synthesis or nobody answered. */
  source: { judge: string; label: string; round: number; step: number } | null;
  /** Votes cast over all consensus rounds, fresh or stale. */
  votes_cast: number;
  /** What happened, in words: the same sentence SUMMARY.md and the dashboard show. */
  decision: string;
  max_rounds?: number;
  judges: Array<{ name: string; backend: string; label?: string; status: 'ok' | 'degraded'; reason?: string; verdict_path: string }>;
  tally?: Record<string, number>;
  votes: Array<{ voter: string; target: string; reason: string; round: number; seen: Record<string, number> }>;
  stale_votes: ConsensusReport['votes'];
  rounds: ConsensusOutcome<unknown>['rounds'];
  /** The files this round scored, with their content hash (the worker may change them later). */
  deliverable?: DeliverableDigest[];
  /** Vote mode: every answer given, with its verdict and scores. */
  answers?: AnswerLine[];
  scores?: Record<string, { result: number; by_judge: Record<string, number> }>;
  verdict: 'iterate' | 'converged';
  status: 'ok' | 'degraded';
}

function vote(v: VoteRecord): ConsensusReport['votes'][number] {
  return { voter: v.voter, target: v.target, reason: v.reason, round: v.round, seen: v.seen };
}

export function judgesSection(judges: readonly JudgeInput[], labels?: ReadonlyMap<string, string>): ConsensusReport['judges'] {
  return judges.map((j) => ({
    name: j.name,
    backend: j.backend ?? '(unknown)',
    ...(labels?.get(j.name) ? { label: labels.get(j.name) } : {}),
    status: j.status,
    ...(j.reason ? { reason: j.reason } : {}),
    verdict_path: j.verdictPath,
  }));
}

function answerLine(a: AnswerRecord<EvaluationFiles>, labels: ReadonlyMap<string, string>): AnswerLine {
  const label = labels.get(a.judge);
  const v = a.answer.verdict;
  return {
    judge: a.judge,
    ...(label ? { label } : {}),
    round: a.round,
    step: a.step,
    verdict: v.verdict,
    status: v.status,
    scores: v.scores,
  };
}

export function voteReport(
  outcome: ConsensusOutcome<EvaluationFiles>,
  judges: readonly JudgeInput[],
  labels: ReadonlyMap<string, string>,
  maxRounds: number,
  result: EvaluationFiles,
): ConsensusReport {
  const w = outcome.winnerAnswer;
  const source = w ? { judge: w.judge, label: labels.get(w.judge) ?? '?', step: w.step, round: w.round } : null;
  const votesCast = outcome.rounds.reduce((n, r) => n + r.votes.length, 0);
  const decision = decisionText({
    decided_by: outcome.decidedBy,
    forced: outcome.forced,
    ...(outcome.forcedReason ? { forced_reason: outcome.forcedReason } : {}),
    consensus_rounds: outcome.rounds.length,
    votes_cast: votesCast,
    tally: outcome.tally,
    judges: judges.length,
    source,
  });
  return {
    schema_version: '1',
    mode: 'vote',
    winner: source,
    forced: outcome.forced,
    ...(outcome.forcedReason ? { forced_reason: outcome.forcedReason } : {}),
    decided_by: outcome.decidedBy,
    source,
    votes_cast: votesCast,
    decision,
    max_rounds: maxRounds,
    judges: judgesSection(judges, labels),
    tally: outcome.tally,
    votes: outcome.votes.map(vote),
    stale_votes: outcome.staleVotes.map(vote),
    rounds: outcome.rounds,
    answers: outcome.answers.map((a) => answerLine(a, labels)),
    verdict: result.verdict.verdict,
    status: result.verdict.status,
  };
}

export function aggregateReport(
  mode: 'harshest' | 'mean',
  judges: readonly JudgeInput[],
  result: EvaluationFiles,
  ids: readonly string[],
): ConsensusReport {
  const ok = judges.filter((j) => j.files);
  const scores: NonNullable<ConsensusReport['scores']> = {};
  for (const id of ids) {
    const byJudge = Object.fromEntries(ok.map((j) => [j.name, j.files?.verdict.scores[id]]).filter(([, s]) => s !== undefined)) as Record<
      string,
      number
    >;
    const value = result.verdict.scores[id];
    if (value !== undefined) scores[id] = { result: value, by_judge: byJudge };
  }
  return {
    schema_version: '1',
    mode,
    winner: null,
    forced: false,
    decided_by: ok.length ? mode : 'none',
    source: null,
    votes_cast: 0,
    decision: decisionText({
      decided_by: ok.length ? mode : 'none',
      forced: false,
      consensus_rounds: 1,
      votes_cast: 0,
      tally: {},
      judges: judges.length,
      source: null,
    }),
    judges: judgesSection(judges),
    votes: [],
    stale_votes: [],
    rounds: [{ round: 1, launched: judges.map((j) => j.name), answers: ok.map((j) => j.name), votes: [], idle: [] }],
    scores,
    verdict: result.verdict.verdict,
    status: result.verdict.status,
  };
}
