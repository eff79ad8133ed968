import type { EvaluationFiles } from '../evaluation-files.ts';
import type { JudgeInput } from './judge-inputs.ts';
import type { ConsensusOutcome, VoteRecord } from './types.ts';

export interface ConsensusReport {
  schema_version: '1';
  mode: 'vote' | 'harshest' | 'mean';
  winner: { judge: string; label: string; step: number; round: number } | null;
  forced: boolean;
  forced_reason?: string;
  max_rounds?: number;
  judges: Array<{ name: string; backend: string; label?: string; status: 'ok' | 'degraded'; reason?: string; verdict_path: string }>;
  tally?: Record<string, number>;
  votes: Array<{ voter: string; target: string; reason: string; round: number; seen: Record<string, number> }>;
  stale_votes: ConsensusReport['votes'];
  rounds: ConsensusOutcome<unknown>['rounds'];
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

export function voteReport(
  outcome: ConsensusOutcome<EvaluationFiles>,
  judges: readonly JudgeInput[],
  labels: ReadonlyMap<string, string>,
  maxRounds: number,
  result: EvaluationFiles,
): ConsensusReport {
  const w = outcome.winnerAnswer;
  return {
    schema_version: '1',
    mode: 'vote',
    winner: w ? { judge: w.judge, label: labels.get(w.judge) ?? '?', step: w.step, round: w.round } : null,
    forced: outcome.forced,
    ...(outcome.forcedReason ? { forced_reason: outcome.forcedReason } : {}),
    max_rounds: maxRounds,
    judges: judgesSection(judges, labels),
    tally: outcome.tally,
    votes: outcome.votes.map(vote),
    stale_votes: outcome.staleVotes.map(vote),
    rounds: outcome.rounds,
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
    judges: judgesSection(judges),
    votes: [],
    stale_votes: [],
    rounds: [{ round: 1, launched: judges.map((j) => j.name), answers: ok.map((j) => j.name), votes: [], idle: [] }],
    scores,
    verdict: result.verdict.verdict,
    status: result.verdict.status,
  };
}
