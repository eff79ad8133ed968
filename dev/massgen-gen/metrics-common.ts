// Pieces shared by status.json and metrics_summary.json: RoundRecord dicts, token usage,
// round aggregates and the cumulative view MassGen keeps across interactive turns.
import { epochFloat } from './clock.ts';
import type { ApiCall, AttemptRecord, RoundRecord, TokenDelta } from './model.ts';
import { f, type PyValue } from './py-json.ts';
import { addTokens, zeroTokens } from './tokens.ts';

export const dollars = (micros: number): PyValue => f(micros / 1e6);
export const centi = (cms: number): PyValue => f(cms / 100);

/** Records as the files show them: interactive turn_N repeats the earlier turns' records. */
export function visible(rec: AttemptRecord): { rounds: RoundRecord[]; usage: Record<string, TokenDelta>; apiCalls: ApiCall[] } {
  const carried = rec.carried;
  const usage: Record<string, TokenDelta> = {};
  for (const agent of rec.agents) usage[agent] = addTokens(carried?.usage[agent] ?? zeroTokens(), rec.usage[agent] ?? zeroTokens());
  return {
    rounds: [...(carried?.rounds ?? []), ...rec.rounds],
    usage,
    apiCalls: [...(carried?.apiCalls ?? []), ...rec.apiCalls],
  };
}

export function roundDict(r: RoundRecord): PyValue {
  return {
    round_number: r.roundNumber,
    agent_id: r.agent,
    round_type: r.roundType,
    outcome: r.outcome,
    input_tokens: r.tokens.input,
    output_tokens: r.tokens.output,
    reasoning_tokens: r.tokens.reasoning,
    cached_input_tokens: r.tokens.cached,
    estimated_cost: dollars(r.tokens.costMicros),
    context_window_size: 0,
    context_usage_pct: f(0),
    tool_calls_count: 0,
    token_source: 'api',
    start_time: epochFloat(r.start),
    end_time: epochFloat(r.end),
    duration_ms: f(Math.round((r.end - r.start) / 10) / 100),
    api_calls_count: 0,
    api_time_ms: f(0),
    avg_ttft_ms: f(0),
  };
}

export function tokenUsageDict(t: TokenDelta): PyValue {
  return {
    input_tokens: t.input,
    output_tokens: t.output,
    reasoning_tokens: t.reasoning,
    cached_input_tokens: t.cached,
    estimated_cost: dollars(t.costMicros),
  };
}

export const emptyToolMetrics = (): PyValue => ({ total_calls: 0, total_failures: 0, total_execution_time_ms: 0, by_tool: {} });
export const emptyTools = (): PyValue => ({ total_calls: 0, total_failures: 0, total_execution_time_ms: f(0), by_tool: {} });

export function byOutcome(rounds: RoundRecord[]): Record<string, PyValue> {
  const count = (o: string): number => rounds.filter((r) => r.outcome === o).length;
  return {
    answer: count('answer'),
    vote: count('vote'),
    presentation: count('presentation'),
    post_evaluation: 0,
    restarted: 0,
    error: 0,
    timeout: 0,
  };
}

export function sumTokens(items: TokenDelta[]): TokenDelta {
  return items.reduce(addTokens, zeroTokens());
}
