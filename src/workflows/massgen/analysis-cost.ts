// Cost and tokens: metrics_summary.json first (it includes subagents), then status.json, then agent sums.
import type { CostSummary } from './analysis-model.ts';
import { round } from './coerce.ts';
import type { RunData, TokenUsage } from './model.ts';

/** Token usage per agent summed over attempts (metrics_summary first, else status.json). */
export function tokensByAgent(runs: RunData[]): Map<string, TokenUsage> {
  const out = new Map<string, TokenUsage>();
  for (const run of runs) {
    const source = run.metrics?.agents.some((a) => a.tokenUsage) ? run.metrics.agents : (run.status?.agents ?? []);
    for (const a of source) {
      if (!a.tokenUsage) continue;
      const cur = out.get(a.id) ?? { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedInputTokens: 0, estimatedCost: 0 };
      out.set(a.id, {
        inputTokens: cur.inputTokens + a.tokenUsage.inputTokens,
        outputTokens: cur.outputTokens + a.tokenUsage.outputTokens,
        reasoningTokens: cur.reasoningTokens + a.tokenUsage.reasoningTokens,
        cachedInputTokens: cur.cachedInputTokens + a.tokenUsage.cachedInputTokens,
        estimatedCost: cur.estimatedCost + a.tokenUsage.estimatedCost,
      });
    }
  }
  return out;
}

export function costSummary(runs: RunData[]): CostSummary {
  const agents = [...tokensByAgent(runs).values()];
  const sum = (pick: (t: TokenUsage) => number): number => agents.reduce((s, t) => s + pick(t), 0);
  let total: number | null = null;
  let subagent: number | null = null;
  const sources = new Set<string>();
  for (const run of runs) {
    const part = run.metrics?.totalCost ?? run.status?.totalCost ?? null;
    if (part !== null) {
      total = (total ?? 0) + part;
      sources.add(run.metrics?.totalCost != null ? 'metrics_summary.json totals.estimated_cost' : 'status.json costs.total_estimated_cost');
    }
    if (run.metrics?.subagentCost != null) subagent = (subagent ?? 0) + run.metrics.subagentCost;
  }
  const agentUsd =
    agents.length > 0
      ? round(
          sum((t) => t.estimatedCost),
          6,
        )
      : null;
  if (total === null && agentUsd !== null) {
    total = agentUsd;
    sources.add('sum of agent token_usage.estimated_cost');
  }
  const input = sum((t) => t.inputTokens);
  const cached = sum((t) => t.cachedInputTokens);
  return {
    totalUsd: total === null ? null : round(total, 6),
    agentUsd,
    subagentUsd: subagent === null ? null : round(subagent, 6),
    inputTokens: input,
    outputTokens: sum((t) => t.outputTokens),
    reasoningTokens: sum((t) => t.reasoningTokens),
    cachedInputTokens: cached,
    cacheHitRate: input > 0 ? round(cached / input, 4) : null,
    source: sources.size > 0 ? [...sources].sort().join('; ') : 'none (no status.json or metrics_summary.json)',
  };
}
