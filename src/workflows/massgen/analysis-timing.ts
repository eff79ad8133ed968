// Wall clock (never the sum of parallel rounds), phases, per-round timing and API time.
import type { ApiSummary, PhaseRow, RoundRow } from './analysis-model.ts';
import { naiveMs, relative, type Clock } from './clock.ts';
import { round } from './coerce.ts';
import type { RoundRecord, RunData } from './model.ts';

export function roundsOf(run: RunData): RoundRecord[] {
  const fromMetrics = run.metrics?.agents.flatMap((a) => a.rounds) ?? [];
  if (fromMetrics.length > 0) return fromMetrics;
  return run.status?.agents.flatMap((a) => a.rounds) ?? [];
}

export function roundRows(runs: RunData[], clock: Clock): RoundRow[] {
  const rows: RoundRow[] = [];
  for (const run of runs) {
    const tools = run.metricsEvents?.toolExecutions ?? [];
    for (const r of roundsOf(run)) {
      const seconds = r.durationMs / 1000;
      const inRound = tools.filter(
        (t) =>
          t.agentId === r.agentId &&
          t.startTime !== null &&
          r.startTime !== null &&
          r.endTime !== null &&
          t.startTime >= r.startTime &&
          t.startTime <= r.endTime,
      );
      const toolSeconds = Math.min(
        seconds,
        inRound.reduce((sum, t) => sum + t.executionMs / 1000, 0),
      );
      rows.push({
        agentId: r.agentId,
        attempt: run.attempt,
        round: r.roundNumber,
        type: r.roundType,
        outcome: r.outcome,
        startAt: relative(clock, r.startTime),
        endAt: relative(clock, r.endTime),
        seconds: round(seconds),
        toolSeconds: round(toolSeconds),
        nonToolSeconds: round(seconds - toolSeconds),
        toolCalls: r.toolCalls,
        inputTokens: r.inputTokens,
        outputTokens: r.outputTokens,
        costUsd: round(r.cost, 6),
      });
    }
  }
  return rows.sort(
    (a, b) => a.agentId.localeCompare(b.agentId) || a.attempt - b.attempt || (a.startAt ?? 0) - (b.startAt ?? 0) || a.round - b.round,
  );
}

export function phaseRows(rows: RoundRow[]): PhaseRow[] {
  const total = rows.reduce((sum, r) => sum + r.seconds, 0);
  const groups = new Map<string, number[]>();
  for (const r of rows) groups.set(r.type, [...(groups.get(r.type) ?? []), r.seconds]);
  const order = ['initial_answer', 'voting', 'presentation', 'post_evaluation'];
  return [...groups.keys()]
    .sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b))
    .map((phase) => {
      const list = groups.get(phase) ?? [];
      const sum = list.reduce((s, x) => s + x, 0);
      return {
        phase,
        count: list.length,
        avgSeconds: round(sum / list.length),
        maxSeconds: round(Math.max(...list)),
        totalSeconds: round(sum),
        pctOfTotal: total > 0 ? round((sum / total) * 100, 1) : 0,
      };
    });
}

/** Wall-clock seconds of one attempt and where the figure came from. */
export function wallClockOf(run: RunData): { seconds: number | null; source: string } {
  const c = run.coordination;
  if (c) {
    const start = c.startTime ?? run.status?.startTime ?? c.events.find((e) => e.type === 'session_start')?.timestamp ?? null;
    const end =
      c.events.find((e) => (e.type === 'final_answer' || e.type === 'session_end') && e.timestamp !== null)?.timestamp ?? c.endTime;
    if (start !== null && end !== null && end >= start)
      return { seconds: round(end - start), source: 'coordination_events.json (start to first final_answer/session_end)' };
  }
  if (run.status?.elapsedSeconds != null) return { seconds: round(run.status.elapsedSeconds), source: 'status.json meta.elapsed_seconds' };
  const first = naiveMs(run.events?.firstTimestamp ?? null);
  const last = naiveMs(run.events?.lastTimestamp ?? null);
  if (first !== null && last !== null && last >= first)
    return { seconds: round((last - first) / 1000), source: 'events.jsonl (first to last event)' };
  const rounds = roundsOf(run).filter((r) => r.startTime !== null && r.endTime !== null);
  if (rounds.length > 0) {
    const start = Math.min(...rounds.map((r) => r.startTime ?? 0));
    const end = Math.max(...rounds.map((r) => r.endTime ?? 0));
    return { seconds: round(end - start), source: 'round_history (first start to last end)' };
  }
  const start = naiveMs(run.metadata?.timestamp ?? null);
  const stamps = [...(run.mappings ?? []).map((m) => m.timestamp), ...run.snapshots.map((s) => s.timestamp)]
    .map(naiveMs)
    .filter((t): t is number => t !== null);
  if (start !== null && stamps.length > 0 && Math.max(...stamps) >= start) {
    return {
      seconds: round((Math.max(...stamps) - start) / 1000),
      source: 'execution_metadata.yaml timestamp to last snapshot (approximate)',
    };
  }
  return { seconds: null, source: 'unknown' };
}

export function wallClock(runs: RunData[]): { seconds: number | null; source: string } {
  const parts = runs.map(wallClockOf);
  const known = parts.filter((p) => p.seconds !== null);
  if (known.length === 0) return { seconds: null, source: 'unknown' };
  const sources = [...new Set(known.map((p) => p.source))].sort();
  const seconds = round(known.reduce((sum, p) => sum + (p.seconds ?? 0), 0));
  return { seconds, source: runs.length > 1 ? `sum over ${known.length} attempt(s): ${sources.join('; ')}` : (sources[0] ?? 'unknown') };
}

export function apiSummary(runs: RunData[]): ApiSummary | null {
  const timings = runs.map((r) => r.metrics?.apiTiming).filter((t) => t != null);
  if (timings.length === 0) return null;
  const calls = timings.reduce((s, t) => s + t.totalCalls, 0);
  const ms = timings.reduce((s, t) => s + t.totalTimeMs, 0);
  const ttft = timings.reduce((s, t) => s + t.avgTtftMs * t.totalCalls, 0);
  const backends = new Map<string, { calls: number; ms: number }>();
  for (const t of timings)
    for (const b of t.byBackend) {
      const cur = backends.get(b.name) ?? { calls: 0, ms: 0 };
      backends.set(b.name, { calls: cur.calls + b.calls, ms: cur.ms + b.timeMs });
    }
  return {
    totalCalls: calls,
    totalSeconds: round(ms / 1000),
    avgSeconds: calls > 0 ? round(ms / calls / 1000) : 0,
    avgTtftSeconds: calls > 0 ? round(ttft / calls / 1000) : 0,
    byBackend: [...backends.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, b]) => ({ name, calls: b.calls, seconds: round(b.ms / 1000) })),
  };
}
