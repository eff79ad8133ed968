// metrics_summary.json and metrics_events.json (spec §2.2, §2.3): written only at the end of a turn.
import { arr, bool, num, obj, str } from './coerce.ts';
import type { ApiTiming, MetricsEvents, MetricsSummary, ToolExecution, WarningSink } from './model.ts';
import { keyedObjects, parseRounds, parseTokenUsage, parseToolStats } from './parse-common.ts';

export function parseMetricsSummary(value: unknown, rel: string, warn: WarningSink): MetricsSummary | null {
  const root = obj(value);
  if (!root) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object at the top level; ignored');
    return null;
  }
  const meta = obj(root.meta) ?? {};
  const totals = obj(root.totals) ?? {};
  if (root.totals !== undefined && obj(root.totals) === null) warn(rel, 'wrong-type', '`totals` is not an object; cost totals ignored');
  return {
    question: str(meta.question),
    winner: str(meta.winner),
    numAgents: num(meta.num_agents),
    totalCost: num(totals.estimated_cost),
    subagentCost: num(totals.subagent_cost),
    inputTokens: num(totals.input_tokens),
    outputTokens: num(totals.output_tokens),
    reasoningTokens: num(totals.reasoning_tokens),
    tools: parseToolStats(root.tools),
    apiTiming: parseApiTiming(root.api_timing),
    agents: keyedObjects(root.agents).map(([id, a]) => ({
      id,
      tokenUsage: parseTokenUsage(a.token_usage),
      rounds: parseRounds(a.round_history, id),
    })),
  };
}

function parseApiTiming(value: unknown): ApiTiming | null {
  const t = obj(value);
  if (!t) return null;
  return {
    totalCalls: num(t.total_calls) ?? 0,
    totalTimeMs: num(t.total_time_ms) ?? 0,
    avgTimeMs: num(t.avg_time_ms) ?? 0,
    avgTtftMs: num(t.avg_ttft_ms) ?? 0,
    byBackend: keyedObjects(t.by_backend).map(([name, b]) => ({ name, calls: num(b.calls) ?? 0, timeMs: num(b.time_ms) ?? 0 })),
  };
}

export function parseMetricsEvents(value: unknown, rel: string, warn: WarningSink): MetricsEvents | null {
  const root = obj(value);
  if (!root) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object at the top level; ignored');
    return null;
  }
  const toolExecutions: ToolExecution[] = [];
  for (const item of arr(root.tool_executions)) {
    const t = obj(item);
    if (!t) continue;
    toolExecutions.push({
      toolName: str(t.tool_name) ?? 'unknown',
      agentId: str(t.agent_id),
      startTime: num(t.start_time),
      executionMs: num(t.execution_time_ms) ?? 0,
      success: bool(t.success) ?? true,
      errorMessage: str(t.error_message),
      outputChars: num(t.output_chars) ?? 0,
    });
  }
  return { toolExecutions };
}
