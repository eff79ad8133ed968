// status.json (CoordinationTracker.save_status_file), as of the attempt's last 2-second rewrite.
import { epochFloat } from './clock.ts';
import { WORKFLOW_ERROR_CODES } from './enforcement.ts';
import type { AttemptRecord, EnforcementRecord } from './model.ts';
import { f, pyJsonIndent, type PyValue } from './py-json.ts';
import { byOutcome, dollars, emptyToolMetrics, emptyTools, roundDict, sumTokens, tokenUsageDict, visible } from './metrics-common.ts';
import { pyPrefix } from './enforcement.ts';

export const WORKING_DIRECTORY = '/home/user/project';

export function attemptRel(rec: AttemptRecord): string {
  return `.massgen/massgen_logs/${rec.logName}/turn_${rec.turn}/attempt_${rec.attempt}`;
}

function reliability(entries: EnforcementRecord[]): PyValue {
  if (entries.length === 0) return null;
  const byRound: Record<string, { count: number; reasons: string[] }> = {};
  for (const e of entries) {
    const slot = (byRound[String(e.round)] ??= { count: 0, reasons: [] });
    slot.count++;
    slot.reasons.push(e.reason);
  }
  return {
    enforcement_attempts: entries.map((e) => ({
      round: e.round,
      attempt: e.attempt,
      max_attempts: 3,
      reason: e.reason,
      tool_calls: e.toolCalls,
      error_message: e.errorMessage,
      buffer_preview: e.bufferPreview,
      buffer_chars: e.bufferChars,
      timestamp: epochFloat(e.at),
    })),
    by_round: byRound,
    unknown_tools: [],
    workflow_errors: [...new Set(entries.map((e) => e.reason).filter((r) => WORKFLOW_ERROR_CODES.has(r)))],
    total_enforcement_retries: entries.length,
    total_buffer_chars_lost: entries.reduce((n, e) => n + e.bufferChars, 0),
    outcome: 'ok',
  };
}

export function resultsVotes(rec: AttemptRecord): Record<string, number> {
  const votes: Record<string, number> = {};
  for (const v of rec.votes) votes[v.targetLabel] = (votes[v.targetLabel] ?? 0) + 1;
  return votes;
}

export function renderStatus(rec: AttemptRecord): string {
  const view = visible(rec);
  const complete = rec.final !== null;
  const phase = complete ? 'presentation' : rec.votes.length > 0 ? 'enforcement' : 'initial_answer';
  const n = rec.agents.length;
  const completion = Math.min(100, Math.trunc(((rec.answers.length + rec.votes.length) / (2 * n)) * 100));
  const allUsage = sumTokens(Object.values(view.usage));
  const roundTokens = sumTokens(view.rounds.map((r) => r.tokens));
  const agents: Record<string, PyValue> = {};
  for (const id of rec.agents) {
    const st = rec.agentState[id];
    if (!st) throw new Error(`renderStatus: no final state for ${id}`);
    const usage = view.usage[id];
    agents[id] = {
      status: st.status,
      answer_count: st.answerCount,
      latest_answer_label: st.latestLabel,
      vote_cast: st.firstVote
        ? {
            voted_for_agent: st.firstVote.target,
            voted_for_label: st.firstVote.targetLabel,
            reason_preview: pyPrefix(st.firstVote.reason, 100),
          }
        : null,
      times_restarted: st.round,
      last_activity: epochFloat(st.lastActivity),
      error: null,
      workspace_paths: null,
      token_usage: usage ? tokenUsageDict(usage) : null,
      tool_metrics: emptyToolMetrics(),
      round_history: view.rounds.filter((r) => r.agent === id).map(roundDict),
      round_timing: { round_number: st.round, round_start_time: epochFloat(st.roundStart) },
      reliability: reliability(rec.enforcement.filter((e) => e.agent === id)),
    };
  }
  const rel = attemptRel(rec);
  const status: PyValue = {
    finish_reason: complete ? 'completed' : 'in_progress',
    finish_reason_details: complete ? `Winner: ${rec.final?.winner}` : `Phase: ${phase}`,
    is_complete: complete,
    review_pending: false,
    meta: {
      last_updated: epochFloat(rec.statusAt),
      session_id: `attempt_${rec.attempt}`,
      log_dir: rel,
      question: rec.question,
      start_time: epochFloat(rec.start),
      elapsed_seconds: f(Math.round((rec.statusAt - rec.start) / 1000) / 1000),
      orchestrator_paths: { snapshot_storage: null, temp_workspace_parent: null },
      eval_criteria: null,
      context_paths: null,
      docker_enabled: false,
    },
    costs: {
      total_estimated_cost: dollars(allUsage.costMicros),
      total_input_tokens: allUsage.input,
      total_output_tokens: allUsage.output,
    },
    tools: emptyTools(),
    rounds: {
      total_rounds: view.rounds.length,
      by_outcome: byOutcome(view.rounds),
      total_round_input_tokens: roundTokens.input,
      total_round_output_tokens: roundTokens.output,
      total_round_cost: dollars(roundTokens.costMicros),
    },
    coordination: {
      phase,
      active_agent: complete ? null : rec.activeAgent,
      completion_percentage: completion,
      is_final_presentation: complete,
    },
    agents,
    historical_workspaces: rec.answers.map((a) => ({
      answerId: `${a.agent}-${a.stamp}`,
      agentId: a.agent,
      answerNumber: a.round,
      answerLabel: a.label,
      timestamp: a.stamp,
      workspacePath: `${WORKING_DIRECTORY}/${rel}/${a.agent}/${a.stamp}/workspace`,
    })),
    results: {
      votes: resultsVotes(rec),
      winner: rec.final?.winner ?? null,
      final_answer_preview: rec.final ? pyPrefix(rec.final.text, 200) : null,
    },
  };
  return pyJsonIndent(status);
}
