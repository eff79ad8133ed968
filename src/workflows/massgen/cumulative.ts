// Interactive multi-turn sessions write cumulative metrics (spec §9): turn_N's status.json and
// metrics_summary.json repeat turn_{N-1}'s round_history and include its tokens and cost. When the
// first attempt of a turn starts with the previous turn's round records, those are subtracted.
import type { AgentStatus, MetricsSummary, RoundRecord, RunData, StatusFile, TokenUsage, WarningSink } from './model.ts';

const roundKey = (r: RoundRecord): string => `${r.agentId}|${r.roundType}|${r.startTime}|${r.endTime}`;

function minus(a: TokenUsage | null, b: TokenUsage | null): TokenUsage | null {
  if (!a || !b) return a;
  const d = (x: number, y: number): number => Math.max(0, Math.round((x - y) * 1e6) / 1e6);
  return {
    inputTokens: d(a.inputTokens, b.inputTokens),
    outputTokens: d(a.outputTokens, b.outputTokens),
    reasoningTokens: d(a.reasoningTokens, b.reasoningTokens),
    cachedInputTokens: d(a.cachedInputTokens, b.cachedInputTokens),
    estimatedCost: d(a.estimatedCost, b.estimatedCost),
  };
}

function previousRounds(prev: RunData): Set<string> {
  const rounds = [...(prev.metrics?.agents.flatMap((a) => a.rounds) ?? []), ...(prev.status?.agents.flatMap((a) => a.rounds) ?? [])];
  return new Set(rounds.map(roundKey));
}

/** True when every round of the previous turn reappears in this run (the cumulative-metrics quirk). */
export function isCumulative(run: RunData, prev: RunData): boolean {
  const before = previousRounds(prev);
  if (before.size === 0) return false;
  const now = new Set(
    [...(run.metrics?.agents.flatMap((a) => a.rounds) ?? []), ...(run.status?.agents.flatMap((a) => a.rounds) ?? [])].map(roundKey),
  );
  return [...before].every((k) => now.has(k));
}

function fixStatus(status: StatusFile, prev: StatusFile | null, seen: Set<string>): StatusFile {
  const prevAgent = (id: string): AgentStatus | undefined => prev?.agents.find((a) => a.id === id);
  return {
    ...status,
    totalCost:
      status.totalCost !== null && prev?.totalCost != null
        ? Math.max(0, Math.round((status.totalCost - prev.totalCost) * 1e6) / 1e6)
        : status.totalCost,
    agents: status.agents.map((a) => ({
      ...a,
      tokenUsage: minus(a.tokenUsage, prevAgent(a.id)?.tokenUsage ?? null),
      rounds: a.rounds.filter((r) => !seen.has(roundKey(r))),
    })),
  };
}

function fixMetrics(metrics: MetricsSummary, prev: MetricsSummary | null, seen: Set<string>): MetricsSummary {
  const sub = (x: number | null, y: number | null | undefined): number | null =>
    x !== null && y != null ? Math.max(0, Math.round((x - y) * 1e6) / 1e6) : x;
  const prevTiming = prev?.apiTiming;
  return {
    ...metrics,
    totalCost: sub(metrics.totalCost, prev?.totalCost),
    inputTokens: sub(metrics.inputTokens, prev?.inputTokens),
    outputTokens: sub(metrics.outputTokens, prev?.outputTokens),
    reasoningTokens: sub(metrics.reasoningTokens, prev?.reasoningTokens),
    apiTiming:
      metrics.apiTiming && prevTiming
        ? {
            ...metrics.apiTiming,
            totalCalls: Math.max(0, metrics.apiTiming.totalCalls - prevTiming.totalCalls),
            totalTimeMs: Math.max(0, metrics.apiTiming.totalTimeMs - prevTiming.totalTimeMs),
            byBackend: metrics.apiTiming.byBackend.map((b) => {
              const p = prevTiming.byBackend.find((x) => x.name === b.name);
              return p ? { name: b.name, calls: Math.max(0, b.calls - p.calls), timeMs: Math.max(0, b.timeMs - p.timeMs) } : b;
            }),
          }
        : metrics.apiTiming,
    agents: metrics.agents.map((a) => ({
      ...a,
      tokenUsage: minus(a.tokenUsage, prev?.agents.find((p) => p.id === a.id)?.tokenUsage ?? null),
      rounds: a.rounds.filter((r) => !seen.has(roundKey(r))),
    })),
  };
}

/** Returns the run with the previous turn's share removed, or the run unchanged when not cumulative. */
export function subtractPreviousTurn(run: RunData, prev: RunData, warn: WarningSink, rel: string): RunData {
  if (!isCumulative(run, prev)) return run;
  const seen = previousRounds(prev);
  warn(
    rel,
    'cumulative-metrics',
    'status.json/metrics_summary.json include the previous turn (interactive multi-turn quirk); its rounds, tokens and cost were subtracted',
  );
  return {
    ...run,
    status: run.status ? fixStatus(run.status, prev.status, seen) : null,
    metrics: run.metrics ? fixMetrics(run.metrics, prev.metrics, seen) : null,
  };
}
