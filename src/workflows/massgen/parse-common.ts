// Shapes shared by status.json and metrics_summary.json: token usage, round records, tool aggregates.
import { arr, int, num, obj, str, type Json } from './coerce.ts';
import type { RoundRecord, TokenUsage, ToolStat } from './model.ts';

export function parseTokenUsage(value: unknown): TokenUsage | null {
  const o = obj(value);
  if (!o) return null;
  return {
    inputTokens: num(o.input_tokens) ?? 0,
    outputTokens: num(o.output_tokens) ?? 0,
    reasoningTokens: num(o.reasoning_tokens) ?? 0,
    cachedInputTokens: num(o.cached_input_tokens) ?? 0,
    estimatedCost: num(o.estimated_cost) ?? 0,
  };
}

export function parseRounds(value: unknown, agentId: string): RoundRecord[] {
  const out: RoundRecord[] = [];
  for (const item of arr(value)) {
    const o = obj(item);
    if (!o) continue;
    const start = num(o.start_time);
    const end = num(o.end_time);
    const duration = num(o.duration_ms) ?? (start !== null && end !== null ? (end - start) * 1000 : 0);
    out.push({
      agentId: str(o.agent_id) ?? agentId,
      roundNumber: int(o.round_number) ?? 0,
      roundType: str(o.round_type) ?? 'unknown',
      outcome: str(o.outcome) ?? 'unknown',
      startTime: start,
      endTime: end,
      durationMs: Math.max(0, duration),
      toolCalls: int(o.tool_calls_count) ?? 0,
      inputTokens: num(o.input_tokens) ?? 0,
      outputTokens: num(o.output_tokens) ?? 0,
      cost: num(o.estimated_cost) ?? 0,
    });
  }
  return out;
}

/** `{by_tool: {name: ToolAgg}}` as a sorted list. */
export function parseToolStats(value: unknown): ToolStat[] {
  const byTool = obj(obj(value)?.by_tool);
  if (!byTool) return [];
  return Object.keys(byTool)
    .sort()
    .map((name) => {
      const t: Json = obj(byTool[name]) ?? {};
      return {
        name,
        calls: num(t.call_count) ?? 0,
        failures: num(t.failure_count) ?? 0,
        totalMs: num(t.total_execution_time_ms) ?? 0,
        outputChars: num(t.total_output_chars) ?? 0,
      };
    });
}

/** Object keyed by id, as sorted [id, value] pairs of objects. */
export function keyedObjects(value: unknown): [string, Json][] {
  const o = obj(value);
  if (!o) return [];
  return Object.keys(o)
    .sort()
    .map((k) => [k, obj(o[k])] as const)
    .filter((pair): pair is [string, Json] => pair[1] !== null);
}
