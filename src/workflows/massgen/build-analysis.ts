// Builds the analysis of one turn unit (every attempt) from parsed run data. Pure: no I/O, no clock.
import path from 'node:path';
import type { AgentAnalysis, AnswerRecord, ChecklistItem, FlowEvent, IgnoredVote, TurnAnalysis, VoteRecord } from './analysis-model.ts';
import { costSummary, tokensByAgent } from './analysis-cost.ts';
import { errorSummary } from './analysis-errors.ts';
import { decideState, hasEndOfRunFiles, STATE_RULE } from './analysis-state.ts';
import { apiSummary, phaseRows, roundRows, wallClock } from './analysis-timing.ts';
import { checklistPhases } from './analysis-checklist.ts';
import { answersOf, finishVotes, ignoredVotesOf, labelPrefix, restartsOf, votesOf } from './analysis-votes.ts';
import { commandStats, duplication, toolRows } from './analysis-work.ts';
import { buildClock, isoOfEpoch, relative, type Clock } from './clock.ts';
import { preview, round } from './coerce.ts';
import type { LogWarning, RunData, TurnUnit } from './model.ts';
import { recommend } from './recommendations.ts';
import { markerOfMetadata, strongestMarker, type SessionMarker } from './session-marker.ts';

export interface TurnInput {
  unit: TurnUnit;
  runs: RunData[];
  warnings: LogWarning[];
  nowMs: number;
  staleAfterSeconds: number;
  /** Whether turn_{N+1} exists in the same log folder (a continuation's orphan turn is followed by the rest). */
  nextTurnExists?: boolean;
}

const FLOW_TYPES = new Set([
  'session_start',
  'new_answer',
  'vote_cast',
  'vote_ignored',
  'restart_triggered',
  'final_agent_selected',
  'final_answer',
  'agent_error',
  'agent_timeout',
  'agent_cancelled',
  'session_end',
]);
const FLOW_CAP = 300;

function agentIdsOf(runs: RunData[], answers: AnswerRecord[], votes: VoteRecord[]): string[] {
  const ids = new Set<string>();
  for (const run of runs) {
    run.coordination?.agentIds.forEach((id) => ids.add(id));
    run.status?.agents.forEach((a) => ids.add(a.id));
    run.metrics?.agents.forEach((a) => ids.add(a.id));
    run.metadata?.agents.forEach((a) => a.id !== '?' && ids.add(a.id));
    run.agentDirs.forEach((id) => ids.add(id));
  }
  answers.forEach((a) => ids.add(a.agentId));
  votes.forEach((v) => ids.add(v.voterId));
  ids.delete('?');
  return [...ids].sort();
}

function winnerOf(runs: RunData[]): { agentId: string | null; source: string; finalPresented: boolean } {
  for (const run of [...runs].reverse()) {
    const fromMapping = run.mappings?.find((m) => m.type === 'final_answer')?.agentId ?? null;
    const candidates: [string | null | undefined, string][] = [
      [run.status?.winner, 'status.json results.winner'],
      [run.metrics?.winner, 'metrics_summary.json meta.winner'],
      [run.coordination?.finalWinner, 'coordination_events.json final_winner'],
      [fromMapping, 'snapshot_mappings.json final_answer'],
      [run.finalAgents.length === 1 ? run.finalAgents[0] : null, 'final/<agent> dir'],
    ];
    const hit = candidates.find(([id]) => typeof id === 'string' && id.length > 0);
    if (hit) {
      const id = hit[0] as string;
      const presented =
        run.finalAgents.includes(id) ||
        fromMapping === id ||
        (run.coordination?.events.some((e) => e.type === 'final_answer') ?? false) ||
        run.events?.finalAnswerAt != null;
      return {
        agentId: id,
        source: run.attempt > 1 || runs.length > 1 ? `${hit[1]} (attempt ${run.attempt})` : hit[1],
        finalPresented: presented,
      };
    }
  }
  return { agentId: null, source: 'none', finalPresented: false };
}

function flowOf(runs: RunData[], clock: Clock, answers: AnswerRecord[], votes: VoteRecord[], ignored: IgnoredVote[]): FlowEvent[] {
  const out: FlowEvent[] = [];
  for (const run of runs) {
    if (run.coordination) {
      let seenStart = false;
      for (const e of run.coordination.events) {
        if (!FLOW_TYPES.has(e.type) || (e.type === 'session_start' && seenStart)) continue;
        if (e.type === 'session_start') seenStart = true;
        out.push({
          time: isoOfEpoch(e.timestamp),
          at: relative(clock, e.timestamp),
          attempt: run.attempt,
          type: e.type,
          agentId: e.agentId,
          text: preview(e.details, 200),
        });
      }
      continue;
    }
    const mine = <T extends { attempt: number }>(list: T[]) => list.filter((x) => x.attempt === run.attempt);
    out.push(
      ...mine(answers).map((a) => ({
        time: a.time,
        at: a.at,
        attempt: a.attempt,
        type: 'new_answer',
        agentId: a.agentId,
        text: `Provided answer ${a.label}`,
      })),
    );
    out.push(
      ...mine(votes).map((v) => ({
        time: v.time,
        at: v.at,
        attempt: v.attempt,
        type: 'vote_cast',
        agentId: v.voterId,
        text: `Voted for ${v.votedForLabel ?? v.votedFor}`,
      })),
    );
    out.push(
      ...mine(ignored).map((v) => ({
        time: v.time,
        at: v.at,
        attempt: v.attempt,
        type: 'vote_ignored',
        agentId: v.agentId,
        text: v.details,
      })),
    );
  }
  return out.sort((a, b) => a.attempt - b.attempt || (a.at ?? 0) - (b.at ?? 0)).slice(0, FLOW_CAP);
}

function checklist(a: Omit<TurnAnalysis, 'recommendations' | 'checklist'>): ChecklistItem[] {
  const answered = new Set(a.answers.map((x) => x.agentId));
  const voters = new Set(a.votes.map((v) => v.voterId));
  const missingAnswer = a.agents.filter((g) => !answered.has(g.id)).map((g) => g.id);
  const missingVote = a.agents.filter((g) => !voters.has(g.id)).map((g) => g.id);
  return [
    { item: 'Coordination completed', ok: a.state.value === 'completed', evidence: `state: ${a.state.value}` },
    {
      item: 'All agents submitted an answer',
      ok: a.agents.length > 0 && missingAnswer.length === 0,
      evidence: missingAnswer.length
        ? `no answer from ${missingAnswer.join(', ')}`
        : `${answered.size} of ${a.agents.length} agents answered`,
    },
    {
      item: 'Voting happened and every agent voted',
      ok: a.votes.length > 0 && missingVote.length === 0,
      evidence: missingVote.length
        ? `${a.votes.length} vote(s); no vote from ${missingVote.join(', ')}`
        : `${a.votes.length} vote(s) from ${voters.size} agent(s)`,
    },
    {
      item: 'A winner was selected',
      ok: a.winner.agentId !== null,
      evidence: a.winner.agentId ? `${a.winner.agentId} (${a.winner.source})` : 'no winner recorded',
    },
    {
      item: 'The winner presented a final answer',
      ok: a.winner.agentId !== null && a.winner.finalPresented,
      evidence: a.winner.finalPresented ? 'final answer recorded' : 'no final presentation found',
    },
  ];
}

function agentRows(
  ids: string[],
  runs: RunData[],
  answers: AnswerRecord[],
  votes: VoteRecord[],
  rounds: { agentId: string }[],
  restarts: Map<string, number>,
): AgentAnalysis[] {
  const tokens = tokensByAgent(runs);
  const configured = new Map(runs.flatMap((r) => r.metadata?.agents ?? []).map((a) => [a.id, a]));
  const last = runs[runs.length - 1];
  return ids.map((id) => {
    const statuses = runs.flatMap((r) => r.status?.agents.filter((a) => a.id === id) ?? []);
    const t = tokens.get(id);
    return {
      id,
      label: labelPrefix(ids, id),
      backend: configured.get(id)?.backend ?? null,
      model: configured.get(id)?.model ?? null,
      status: last?.status?.agents.find((a) => a.id === id)?.status ?? null,
      answers: answers.filter((a) => a.agentId === id).length,
      votesCast: votes.filter((v) => v.voterId === id).length,
      votesReceived: votes.filter((v) => v.votedFor === id).length,
      restarts: restarts.get(id) ?? 0,
      rounds: rounds.filter((r) => r.agentId === id).length,
      enforcementRetries: statuses.reduce((s, a) => s + a.enforcement.length, 0),
      bufferCharsLost: statuses.reduce((s, a) => s + a.bufferCharsLost, 0),
      inputTokens: t?.inputTokens ?? 0,
      outputTokens: t?.outputTokens ?? 0,
      reasoningTokens: t?.reasoningTokens ?? 0,
      cachedInputTokens: t?.cachedInputTokens ?? 0,
      costUsd: t ? round(t.estimatedCost, 6) : null,
    };
  });
}

/**
 * `massgen --automation --session-id S` writes a new log folder whose turn_N holds only events.jsonl,
 * massgen.log and execution_metadata.yaml (naming S as continued) and whose turn_{N+1} holds the rest
 * (spec §9). That turn did not stop early: it is the same run as the next turn, counted there.
 */
function continuationState(runs: RunData[], input: TurnInput): TurnAnalysis['state'] | null {
  if (!input.nextTurnExists || !input.unit.turnDir) return null;
  const reportDir = input.unit.turnDir;
  const marker = strongestMarker(runs.flatMap((r) => sessionMarkersOf(r, path.relative(reportDir, r.dir))));
  if (marker?.role !== 'continued') return null;
  if (runs.some((r) => r.status || r.metrics || r.coordination || r.mappings || r.snapshots.length > 0 || hasEndOfRunFiles(r))) return null;
  return {
    value: 'continued',
    finishReason: null,
    finishReasonDetails: `continues MassGen session ${marker.id}; the run's other files are in turn_${input.unit.turn + 1}`,
    isComplete: null,
    heartbeatSource: 'none',
    lastActivity: null,
    ageSeconds: null,
    staleAfterSeconds: input.staleAfterSeconds,
    rule: `${STATE_RULE}; a turn holding only events.jsonl, massgen.log and execution_metadata.yaml that continue a --session-id session, followed by turn N+1, is continued (counted with turn N+1)`,
  };
}

export function buildTurnAnalysis(input: TurnInput): TurnAnalysis {
  const { unit, runs } = input;
  const clock = buildClock(runs);
  const preIds = [
    ...new Set(runs.flatMap((r) => [...(r.coordination?.agentIds ?? []), ...r.agentDirs, ...(r.status?.agents.map((a) => a.id) ?? [])])),
  ].sort();
  const answers = runs.flatMap((r) => answersOf(r, clock, preIds));
  const votes = finishVotes(
    runs.flatMap((r) => votesOf(r, clock)),
    answers,
  );
  const ignoredVotes = runs.flatMap((r) => ignoredVotesOf(r, clock));
  const ids = agentIdsOf(runs, answers, votes);
  const restartCounts = new Map<string, number>();
  let restartSourceKnown = false;
  for (const run of runs) {
    const r = restartsOf(run);
    if (r.source !== 'none') restartSourceKnown = true;
    for (const [id, n] of r.byAgent) restartCounts.set(id, (restartCounts.get(id) ?? 0) + n);
  }
  const tableRestarts = runs.reduce<number | null>((s, r) => (r.table?.restarts != null ? (s ?? 0) + r.table.restarts : s), null);
  const rounds = roundRows(runs, clock);
  const wall = wallClock(runs);
  const cost = costSummary(runs);
  const metadata = runs.find((r) => r.metadata?.agents.length)?.metadata ?? runs.find((r) => r.metadata)?.metadata ?? null;
  const reportDir = unit.turnDir ?? unit.logDir;
  const files = runs.flatMap((r) => r.files.map((f) => ({ path: f.path, bytes: f.bytes })));
  const winner = winnerOf(runs);
  const draft = {
    schemaVersion: 1 as const,
    kind: 'massgen-turn-analysis' as const,
    analyzedAt: new Date(input.nowMs).toISOString(),
    source: {
      session: path.basename(unit.logDir),
      turn: unit.turn,
      turnDir: unit.turnDir ? path.basename(unit.turnDir) : null,
      layout: unit.layout,
      massgenVersion: runs.map((r) => r.metadata?.massgenVersion).find((v) => v) ?? null,
      massgenSession: strongestMarker(runs.flatMap((r) => sessionMarkersOf(r, path.relative(reportDir, r.dir)))),
      attempts: runs.map((r) => ({
        attempt: r.attempt,
        dir: path.relative(reportDir, r.dir) || '.',
        finishReason: r.status?.finishReason ?? null,
        files: r.files.length,
        bytes: r.files.reduce((s, f) => s + f.bytes, 0),
        endOfRunFiles: hasEndOfRunFiles(r),
      })),
    },
    state: continuationState(runs, input) ?? decideState(runs, input.nowMs, input.staleAfterSeconds),
    question:
      runs.map((r) => r.status?.question ?? r.metrics?.question ?? r.coordination?.userPrompt ?? r.metadata?.query).find((q) => q) ?? null,
    winner,
    overview: {
      wallClockSeconds: wall.seconds,
      wallClockSource: wall.source,
      summedRoundSeconds: rounds.length > 0 ? round(rounds.reduce((s, r) => s + r.seconds, 0)) : null,
      agents: ids.length,
      answers: answers.length,
      votes: votes.length,
      finalVotes: votes.filter((v) => !v.superseded).length,
      ignoredVotes: ignoredVotes.length,
      restarts: restartSourceKnown ? [...restartCounts.values()].reduce((s, n) => s + n, 0) : (tableRestarts ?? 0),
      orchestrationRestarts: Math.max(0, runs.length - 1),
      totalCostUsd: cost.totalUsd,
      costSource: cost.source,
    },
    agents: agentRows(ids, runs, answers, votes, rounds, restartCounts),
    answers,
    votes,
    ignoredVotes,
    coordinationFlow: flowOf(runs, clock, answers, votes, ignoredVotes),
    timing: {
      phases: phaseRows(rounds),
      rounds,
      checklist: checklistPhases(runs),
      api: apiSummary(runs),
      bottlenecks: bottlenecks(rounds),
    },
    tools: toolRows(runs),
    commands: commandStats(runs),
    duplication: duplication(runs),
    cost,
    errors: errorSummary(runs),
    subagents: runs.flatMap((r) => r.subagents),
    config: {
      configPath: metadata?.configPath ?? null,
      massgenVersion: metadata?.massgenVersion ?? null,
      pythonVersion: metadata?.pythonVersion ?? null,
      gitBranch: metadata?.gitBranch ?? null,
      gitCommit: metadata?.gitCommit ?? null,
      agents: metadata?.agents ?? [],
      orchestrator: metadata?.orchestrator ?? {},
    },
    files: files.slice(0, 1000),
    warnings: [...input.warnings],
  };
  if (!clock.tzKnown && runs.some((r) => r.events !== null)) {
    draft.warnings.push({
      file: '.',
      code: 'clock',
      message: 'local-time offset unknown (no vote.json or metadata/status pair); events.jsonl times were read as UTC',
    });
  }
  const withChecklist = { ...draft, checklist: checklist(draft) };
  return { ...withChecklist, recommendations: recommend(withChecklist) };
}

/** The MassGen session this turn's files name (session-marker.ts), from the metadata and massgen.log. */
function sessionMarkersOf(run: RunData, relDir: string): SessionMarker[] {
  const at = (name: string): string => (relDir ? `${relDir}/${name}` : name);
  const out: SessionMarker[] = [];
  const meta = run.metadata;
  const fromMeta = meta ? markerOfMetadata(meta.cliSessionId, meta.cliMode, meta.configSessionId, at('execution_metadata.yaml')) : null;
  if (fromMeta) out.push(fromMeta);
  const logName = run.files.some((f) => f.path.endsWith('massgen.log')) ? 'massgen.log' : 'massgen_debug.log';
  for (const m of run.massgenLog?.sessionMarkers ?? []) out.push({ id: m.id, role: m.role, evidence: `${at(logName)} line ${m.line}` });
  return out;
}

function bottlenecks(
  rounds: { agentId: string; round: number; type: string; seconds: number; attempt: number }[],
): { what: string; seconds: number }[] {
  return [...rounds]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 5)
    .map((r) => ({
      what: `${r.agentId} round ${r.round} (${r.type}${r.attempt > 1 ? `, attempt ${r.attempt}` : ''})`,
      seconds: r.seconds,
    }));
}
