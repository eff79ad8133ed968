// metrics_summary.json and metrics_events.json (Orchestrator.save_metrics), end of run only.
import { epochFloat, MILLI } from './clock.ts';
import type { ApiCall, AttemptRecord } from './model.ts';
import { f, pyJsonIndent, type PyValue } from './py-json.ts';
import {
  byOutcome,
  centi,
  dollars,
  emptyToolMetrics,
  emptyTools,
  roundDict,
  sumTokens,
  tokenUsageDict,
  visible,
} from './metrics-common.ts';

const round2 = (x: number): number => Math.round(x * 100) / 100;

function timing(calls: ApiCall[]): { calls: number; time: number; ttft: number } {
  return {
    calls: calls.length,
    time: calls.reduce((n, c) => n + c.timeCms, 0),
    ttft: calls.reduce((n, c) => n + c.ttftCms, 0),
  };
}

function apiTiming(calls: ApiCall[]): PyValue {
  const all = timing(calls);
  const byRound: Record<string, PyValue> = {};
  for (const r of [...new Set(calls.map((c) => c.round))].sort((a, b) => a - b)) {
    const t = timing(calls.filter((c) => c.round === r));
    byRound[`round_${r}`] = { calls: t.calls, time_ms: centi(t.time), ttft_ms: centi(t.ttft) };
  }
  return {
    total_calls: all.calls,
    total_time_ms: centi(all.time),
    avg_time_ms: f(all.calls ? round2(all.time / 100 / all.calls) : 0),
    avg_ttft_ms: f(all.calls ? round2(all.ttft / 100 / all.calls) : 0),
    by_round: byRound,
    by_backend: { ChatCompletion: { calls: all.calls, time_ms: centi(all.time), ttft_ms: centi(all.ttft) } },
  };
}

export const metricsEventsAt = (rec: AttemptRecord): number => rec.statusAt + 1 * MILLI + 280;
export const metricsSummaryAt = (rec: AttemptRecord): number => rec.statusAt + 1 * MILLI + 910;

export function renderMetricsSummary(rec: AttemptRecord): string {
  const view = visible(rec);
  const usage = sumTokens(Object.values(view.usage));
  const rounds = sumTokens(view.rounds.map((r) => r.tokens));
  const agents: Record<string, PyValue> = {};
  for (const id of rec.agents) {
    const u = view.usage[id];
    agents[id] = {
      tool_metrics: emptyToolMetrics(),
      round_history: view.rounds.filter((r) => r.agent === id).map(roundDict),
      token_usage: u ? tokenUsageDict(u) : null,
    };
  }
  return pyJsonIndent({
    meta: {
      generated_at: epochFloat(metricsSummaryAt(rec)),
      session_id: `attempt_${rec.attempt}`,
      question: rec.question,
      num_agents: rec.agents.length,
      winner: rec.final?.winner ?? null,
    },
    totals: {
      estimated_cost: dollars(usage.costMicros),
      agent_cost: dollars(usage.costMicros),
      subagent_cost: f(0),
      input_tokens: usage.input,
      output_tokens: usage.output,
      reasoning_tokens: usage.reasoning,
    },
    tools: emptyTools(),
    rounds: {
      total_rounds: view.rounds.length,
      by_outcome: byOutcome(view.rounds),
      total_input_tokens: rounds.input,
      total_output_tokens: rounds.output,
      total_reasoning_tokens: rounds.reasoning,
      total_estimated_cost: dollars(rounds.costMicros),
      avg_context_usage_pct: f(0),
    },
    api_timing: apiTiming(view.apiCalls),
    agents,
    subagents: {
      total_subagents: 0,
      total_input_tokens: 0,
      total_output_tokens: 0,
      total_estimated_cost: f(0),
      total_api_time_ms: f(0),
      total_api_calls: 0,
      subagents: [],
    },
  });
}

export function renderMetricsEvents(rec: AttemptRecord): string {
  return pyJsonIndent({
    meta: { generated_at: epochFloat(metricsEventsAt(rec)), session_id: `attempt_${rec.attempt}`, question: rec.question },
    tool_executions: [],
    round_completions: visible(rec).rounds.map(roundDict),
  });
}
