import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CriteriaDocument, Criterion } from './criteria.ts';
import type { AnswerLine, ConsensusReport } from './consensus/report.ts';
import type { NextTasksArtifact } from './next-tasks.ts';
import type { RegressionArtifact } from './regression.ts';
import { answerStats, type AnswerStats } from './answer-stats.ts';
import { roundAgreement, sessionStandings, type JudgeStanding, type RoundAgreement, type ScoredJudge } from './judge-quality.ts';
import { sessionFiles } from './session-layout.ts';
import { taskLines, type TaskLine } from './task-list.ts';
import { addTotals, emptyTotals, type UsageArtifact, type UsageCall, type UsageTotals } from './usage.ts';
import type { VerdictArtifact } from './verdict.ts';

export type StopReason = 'converged' | 'max_rounds' | 'no_worker' | 'incomplete';

export interface JudgeLine {
  name: string;
  verdict: 'iterate' | 'converged' | null;
  status: 'ok' | 'degraded' | 'missing';
  scores: Record<string, number>;
  reason?: string;
}

export interface RoundSummary {
  round: number;
  verdict: 'iterate' | 'converged';
  status: 'ok' | 'degraded';
  degraded_reason?: string;
  mode: 'vote' | 'harshest' | 'mean' | null;
  winner: string | null;
  forced: boolean;
  forced_reason?: string;
  /** How the consensus decided (consensus.json's decided_by, source, votes_cast, decision); absent without one. */
  decided_by?: ConsensusReport['decided_by'];
  source?: ConsensusReport['source'];
  consensus_rounds?: number;
  votes_cast?: number;
  decision?: string;
  /** Answers the judges gave in consensus rounds after the first, instead of voting (their evaluations are `judges`). */
  new_answers?: Array<Omit<AnswerLine, 'label'>>;
  scores: Record<string, number>;
  judges: JudgeLine[];
  next_tasks_status: 'ok' | 'none' | 'degraded' | 'missing';
  next_tasks: TaskLine[];
  worker?: { job_id: string; status: string; agent: string };
  /** How far the usable judges agree, and each one's offset from the consensus (null: no usable judge). */
  agreement: RoundAgreement | null;
  usage: UsageTotals;
}

export interface UsagePart {
  file: string;
  stage: string;
  run_id: string;
  totals: UsageTotals;
}

/** summary.json (schema `refine-summary`). */
export interface SessionSummary {
  schema_version: '1';
  session: string;
  run_id: string;
  criteria: Array<Pick<Criterion, 'id' | 'text' | 'category'>>;
  rounds: RoundSummary[];
  stopped: { reason: StopReason; round: number };
  final_verdict: 'iterate' | 'converged' | null;
  next_tasks: TaskLine[];
  regression: { status: RegressionArtifact['status']; result: RegressionArtifact['result'] } | null;
  /** Each judge over the session: mean offset (harsh < 0 < lenient) and mean absolute offset from the consensus. */
  judge_standings: JudgeStanding[];
  answers: AnswerStats;
  usage: { total: UsageTotals; this_run: UsageTotals; parts: UsagePart[] };
  warnings: string[];
}

export interface SummaryInput {
  /** Absolute path of the session folder. */
  dir: string;
  session: string;
  runId: string;
  maxRounds: number;
  /**
   * Whether a worker changed the deliverable between rounds. Without one the loop stops after round 1;
   * with one, rounds 1..maxRounds each hand a non-converged verdict to the worker and round maxRounds+1
   * is the final evaluation of its last changes.
   */
  hasWorker: boolean;
  /** Judge names in registration order; missing: the folders found, sorted. */
  judges?: readonly string[];
  /** Problems of `data` against schema `name`, or undefined when valid. */
  validate(name: string, data: unknown): string | undefined;
}

class SessionReader {
  readonly warnings: string[] = [];
  readonly parts: UsagePart[] = [];
  readonly calls: UsageCall[] = [];
  readonly degraded: string[] = [];

  constructor(private readonly input: SummaryInput) {}

  /** A JSON artifact if present and valid against its schema; a warning (never a crash) otherwise. */
  json<T>(rel: string, schema: string): T | undefined {
    const file = path.join(this.input.dir, rel);
    if (!existsSync(file)) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      this.warnings.push(`${rel}: not valid JSON (${(error as Error).message}); left out of the summary`);
      return undefined;
    }
    const problems = this.input.validate(schema, data);
    if (problems) {
      this.warnings.push(`${rel}: does not match schema ${schema} (${problems}); left out of the summary`);
      return undefined;
    }
    return data as T;
  }

  usage(rel: string): UsageTotals {
    const artifact = this.json<UsageArtifact>(rel, 'llm-usage');
    if (!artifact) return emptyTotals();
    this.parts.push({ file: rel, stage: artifact.stage, run_id: artifact.run_id, totals: artifact.totals });
    this.calls.push(...artifact.calls);
    return artifact.totals;
  }

  /** Notes `rel` as degraded when its status says so. */
  status(rel: string, status: string | undefined): void {
    if (status === 'degraded') this.degraded.push(rel);
  }
}

function judgeNames(dir: string, round: number, given: readonly string[] | undefined): string[] {
  if (given && given.length > 0) return [...given];
  const judgesDir = path.join(dir, sessionFiles.round(round), 'judges');
  if (!existsSync(judgesDir)) return [];
  return readdirSync(judgesDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function judgeLine(reader: SessionReader, round: number, name: string): { line: JudgeLine; usage: UsageTotals } {
  const verdictFile = sessionFiles.judgeFile(round, name, 'verdict.json');
  const tasksFile = sessionFiles.judgeFile(round, name, 'next_tasks.json');
  const verdict = reader.json<VerdictArtifact>(verdictFile, 'verdict');
  reader.status(verdictFile, verdict?.status);
  reader.status(tasksFile, reader.json<NextTasksArtifact>(tasksFile, 'next-tasks')?.status);
  const usage = reader.usage(sessionFiles.judgeFile(round, name, 'usage.json'));
  if (!verdict) return { line: { name, verdict: null, status: 'missing', scores: {} }, usage };
  return {
    line: {
      name,
      verdict: verdict.verdict,
      status: verdict.status,
      scores: verdict.scores,
      ...(verdict.degraded_reason ? { reason: verdict.degraded_reason } : {}),
    },
    usage,
  };
}

function agreementOf(judges: readonly JudgeLine[], verdict: VerdictArtifact, ids: readonly string[]): RoundAgreement | null {
  const usable = judges.filter((j): j is JudgeLine & ScoredJudge => j.status === 'ok' && j.verdict !== null);
  if (verdict.status !== 'ok') return null;
  const known =
    ids.length > 0
      ? ids
      : [...new Set(usable.flatMap((j) => Object.keys(j.scores)))].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  return roundAgreement(usable, verdict, known) ?? null;
}

/** consensus.json's account of the decision (files written before it had one give nothing). */
function consensusFacts(c: ConsensusReport): Partial<RoundSummary> {
  if (c.decided_by === undefined) return {};
  const later = (c.answers ?? []).filter((a) => a.round > 1).map(({ label: _label, ...a }) => a);
  return {
    decided_by: c.decided_by,
    source: c.source,
    consensus_rounds: c.rounds.length,
    votes_cast: c.votes_cast,
    decision: c.decision,
    ...(later.length ? { new_answers: later } : {}),
  };
}

function readRound(reader: SessionReader, input: SummaryInput, round: number, ids: readonly string[]): RoundSummary | undefined {
  const verdict = reader.json<VerdictArtifact>(sessionFiles.roundFile(round, 'verdict.json'), 'verdict');
  if (!verdict) return undefined;
  reader.status(sessionFiles.roundFile(round, 'verdict.json'), verdict.status);
  const consensus = reader.json<ConsensusReport>(sessionFiles.roundFile(round, 'consensus.json'), 'consensus');
  const next = reader.json<NextTasksArtifact>(sessionFiles.roundFile(round, 'next_tasks.json'), 'next-tasks');
  // A converged round's placeholder is 'none'; 'degraded' is an iterate verdict without a usable plan.
  reader.status(sessionFiles.roundFile(round, 'next_tasks.json'), next?.status);
  const worker = reader.json<{ job_id: string; status: string; agent: string }>(sessionFiles.roundFile(round, 'worker.json'), 'job-record');
  let usage = reader.usage(sessionFiles.roundFile(round, 'usage.json'));
  const judges: JudgeLine[] = [];
  for (const name of judgeNames(input.dir, round, input.judges)) {
    const j = judgeLine(reader, round, name);
    judges.push(j.line);
    usage = addTotals(usage, j.usage);
  }
  return {
    round,
    verdict: verdict.verdict,
    status: verdict.status,
    ...(verdict.degraded_reason ? { degraded_reason: verdict.degraded_reason } : {}),
    mode: consensus?.mode ?? null,
    winner: consensus?.winner?.judge ?? null,
    forced: consensus?.forced ?? false,
    ...(consensus?.forced_reason ? { forced_reason: consensus.forced_reason } : {}),
    ...(consensus ? consensusFacts(consensus) : {}),
    scores: verdict.scores,
    judges,
    next_tasks_status: next ? next.status : 'missing',
    next_tasks: verdict.verdict === 'iterate' ? taskLines(next) : [],
    ...(worker ? { worker: { job_id: worker.job_id, status: worker.status, agent: worker.agent } } : {}),
    agreement: agreementOf(judges, verdict, ids),
    usage,
  };
}

/** The most evaluation rounds the loop runs: one without a worker; with one, max_rounds worker rounds and a final evaluation. */
export function roundLimit(input: Pick<SummaryInput, 'maxRounds' | 'hasWorker'>): number {
  return input.hasWorker ? input.maxRounds + 1 : 1;
}

/**
 * The rounds this session's loop ran, in order, read the way the loop decided: a round follows
 * only a non-converged one, only with a worker, and only up to the round limit. Round folders left over
 * from an earlier, longer run of the same session are not counted.
 */
function readRounds(
  reader: SessionReader,
  input: SummaryInput,
  ids: readonly string[],
): { rounds: RoundSummary[]; stopped: SessionSummary['stopped'] } {
  const rounds: RoundSummary[] = [];
  const limit = roundLimit(input);
  for (let n = 1; n <= limit; n++) {
    const round = readRound(reader, input, n, ids);
    if (!round) return { rounds, stopped: { reason: 'incomplete', round: n - 1 } };
    rounds.push(round);
    if (round.verdict === 'converged') return { rounds, stopped: { reason: 'converged', round: n } };
    if (!input.hasWorker) return { rounds, stopped: { reason: 'no_worker', round: n } };
  }
  return { rounds, stopped: { reason: 'max_rounds', round: limit } };
}

export function summarizeSession(input: SummaryInput): SessionSummary {
  const reader = new SessionReader(input);
  const criteriaDoc = reader.json<CriteriaDocument>(sessionFiles.criteria, 'eval-criteria');
  if (!criteriaDoc) reader.warnings.push(`${sessionFiles.criteria}: missing; scores are listed without criterion texts`);
  // The defaults stand in for criteria the writer failed to give.
  reader.status(sessionFiles.criteria, criteriaDoc?.source === 'default' ? 'degraded' : undefined);
  let total = reader.usage(sessionFiles.criteriaUsage);
  const regression = reader.json<RegressionArtifact>(sessionFiles.regression, 'regression');
  reader.status(sessionFiles.regression, regression?.status);
  total = addTotals(total, reader.usage(sessionFiles.regressionUsage));
  const ids = (criteriaDoc?.criteria ?? []).map((c) => c.id);
  const { rounds, stopped } = readRounds(reader, input, ids);
  for (const r of rounds) total = addTotals(total, r.usage);
  const thisRun = reader.parts.filter((p) => p.run_id === input.runId).reduce((t, p) => addTotals(t, p.totals), emptyTotals());
  const last = rounds.at(-1);
  return {
    schema_version: '1',
    session: input.session,
    run_id: input.runId,
    criteria: (criteriaDoc?.criteria ?? []).map((c) => ({ id: c.id, text: c.text, category: c.category })),
    rounds,
    stopped,
    final_verdict: last?.verdict ?? null,
    next_tasks: last?.next_tasks ?? [],
    regression: regression ? { status: regression.status, result: regression.result } : null,
    judge_standings: sessionStandings(
      rounds.map((r) => r.agreement ?? undefined),
      input.judges ?? [],
    ),
    answers: answerStats(reader.calls, reader.degraded),
    usage: { total, this_run: thisRun, parts: [...reader.parts].sort((a, b) => (a.file < b.file ? -1 : 1)) },
    warnings: reader.warnings,
  };
}
