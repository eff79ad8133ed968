// status.json (spec §2.1): live status, rewritten every 2 s; the last copy of a killed run stays behind.
import { arr, bool, int, num, obj, str, strings, TypeProblems } from './coerce.ts';
import type { AgentStatus, EnforcementAttempt, StatusFile, WarningSink } from './model.ts';
import { keyedObjects, parseRounds, parseTokenUsage, parseToolStats } from './parse-common.ts';

export function parseStatus(value: unknown, rel: string, warn: WarningSink): StatusFile | null {
  const root = obj(value);
  if (!root) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object at the top level; ignored');
    return null;
  }
  const problems = new TypeProblems();
  const meta = obj(root.meta) ?? {};
  const coordination = obj(root.coordination) ?? {};
  const results = obj(root.results) ?? {};
  const votes: Record<string, number> = {};
  for (const [label, count] of Object.entries(obj(results.votes) ?? {})) {
    const n = problems.expect(`results.votes.${label}`, count, num);
    if (n !== null) votes[label] = n;
  }
  const status: StatusFile = {
    finishReason: problems.expect('finish_reason', root.finish_reason, str),
    finishReasonDetails: problems.expect('finish_reason_details', root.finish_reason_details, str),
    isComplete: problems.expect('is_complete', root.is_complete, bool),
    lastUpdated: problems.expect('meta.last_updated', meta.last_updated, num),
    question: problems.expect('meta.question', meta.question, str),
    startTime: problems.expect('meta.start_time', meta.start_time, num),
    elapsedSeconds: problems.expect('meta.elapsed_seconds', meta.elapsed_seconds, num),
    phase: problems.expect('coordination.phase', coordination.phase, str),
    totalCost: problems.expect('costs.total_estimated_cost', obj(root.costs)?.total_estimated_cost, num),
    agents: keyedObjects(root.agents).map(([id, a]) => parseAgent(id, a, problems)),
    votes,
    winner: problems.expect('results.winner', results.winner, str),
  };
  if (root.agents !== undefined && obj(root.agents) === null) problems.note('agents', root.agents, false);
  const summary = problems.summary();
  if (summary) warn(rel, 'wrong-type', summary);
  return status;
}

function parseAgent(id: string, a: Record<string, unknown>, problems: TypeProblems): AgentStatus {
  const error = obj(a.error);
  const reliability = obj(a.reliability);
  return {
    id,
    status: problems.expect(`agents.${id}.status`, a.status, str),
    answerCount: problems.expect(`agents.${id}.answer_count`, a.answer_count, int),
    latestAnswerLabel: problems.expect(`agents.${id}.latest_answer_label`, a.latest_answer_label, str),
    timesRestarted: problems.expect(`agents.${id}.times_restarted`, a.times_restarted, int),
    lastActivity: problems.expect(`agents.${id}.last_activity`, a.last_activity, num),
    error: error ? { type: str(error.type) ?? 'error', message: str(error.message) ?? '', timestamp: num(error.timestamp) } : null,
    tokenUsage: parseTokenUsage(a.token_usage),
    rounds: parseRounds(a.round_history, id),
    enforcement: parseEnforcement(id, reliability?.enforcement_attempts),
    bufferCharsLost: num(reliability?.total_buffer_chars_lost) ?? 0,
    tools: parseToolStats(a.tool_metrics),
  };
}

export function parseEnforcement(agentId: string, value: unknown): EnforcementAttempt[] {
  const out: EnforcementAttempt[] = [];
  for (const item of arr(value)) {
    const e = obj(item);
    if (!e) continue;
    out.push({
      agentId,
      round: int(e.round),
      attempt: int(e.attempt),
      reason: str(e.reason) ?? 'unknown',
      toolCalls: strings(e.tool_calls),
      errorMessage: str(e.error_message),
      bufferChars: num(e.buffer_chars) ?? 0,
      timestamp: num(e.timestamp),
    });
  }
  return out;
}
