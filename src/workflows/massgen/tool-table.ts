// Tool calls per tool (and per agent on request): calls, failures, denied, time. One rule for the
// report's tool table and `refinery logs tools`.
//
// MassGen 0.1.97 writes a call a permission hook denied to events.jsonl (`tool_complete` with status
// "denied"); the metrics files still record it as a failed execution (as 0.1.91 did). So a denied call
// is counted as denied, taken out of the failures and of the time of whichever source gave the row.
import { round } from './coerce.ts';
import type { RunData, ToolStat } from './model.ts';

const WORKFLOW_TOOLS = new Set(['new_answer', 'vote', 'stop']);

export interface ToolTableRow {
  /** null when the rows are per tool only. */
  agentId: string | null;
  name: string;
  /** Every call made, denied ones included. */
  calls: number;
  /** Calls that ran and failed (denied calls are not failures). */
  failures: number;
  /** Calls a permission hook denied: they never ran. */
  denied: number;
  /** Time of the calls that ran. */
  totalSeconds: number;
  /** totalSeconds over the calls that ran. */
  avgSeconds: number;
  outputChars: number;
}

interface Acc extends ToolStat {
  agentId: string | null;
  denied: number;
  deniedMs: number;
}

type Keyed = { agentId: string | null; stat: ToolStat };

/** The richest source of one run: per agent when asked and the source knows the agent. */
function runStats(run: RunData, byAgent: boolean): { stats: Keyed[]; fromEvents: boolean } {
  const perAgent = (agentId: string | null): string | null => (byAgent ? (agentId ?? '?') : null);
  const executions = run.metricsEvents?.toolExecutions ?? [];
  if (byAgent && executions.length > 0)
    return {
      fromEvents: false,
      stats: executions.map((t) => ({
        agentId: perAgent(t.agentId),
        stat: { name: t.toolName, calls: 1, failures: t.success ? 0 : 1, totalMs: t.executionMs, outputChars: t.outputChars },
      })),
    };
  if (!byAgent && run.metrics && run.metrics.tools.length > 0)
    return { fromEvents: false, stats: run.metrics.tools.map((stat) => ({ agentId: null, stat })) };
  if (run.status?.agents.some((a) => a.tools.length > 0))
    return { fromEvents: false, stats: run.status.agents.flatMap((a) => a.tools.map((stat) => ({ agentId: perAgent(a.id), stat }))) };
  if (run.events && run.events.tools.length > 0)
    return {
      fromEvents: true,
      stats: run.events.tools.map((t) => ({
        agentId: perAgent(t.agentId),
        stat: {
          name: t.name,
          calls: 1,
          failures: t.isError && !t.denied ? 1 : 0,
          totalMs: t.denied ? 0 : (t.seconds ?? 0) * 1000,
          outputChars: t.outputChars,
        },
      })),
    };
  return {
    fromEvents: false,
    stats: run.snapshots.flatMap((s) =>
      (s.trace?.toolCalls ?? [])
        .filter((c) => !WORKFLOW_TOOLS.has(c.tool))
        .map((c) => ({
          agentId: perAgent(s.agentId),
          stat: { name: c.tool, calls: 1, failures: c.isError ? 1 : 0, totalMs: 0, outputChars: c.resultChars ?? 0 },
        })),
    ),
  };
}

export function toolTable(runs: RunData[], options: { byAgent?: boolean; sort?: 'time' | 'calls' } = {}): ToolTableRow[] {
  const byAgent = options.byAgent === true;
  const rows = new Map<string, Acc>();
  const acc = (agentId: string | null, name: string): Acc => {
    const key = `${agentId ?? ''}\u0000${name}`;
    let a = rows.get(key);
    if (!a) {
      a = { agentId, name, calls: 0, failures: 0, totalMs: 0, outputChars: 0, denied: 0, deniedMs: 0 };
      rows.set(key, a);
    }
    return a;
  };
  for (const run of runs) {
    const { stats, fromEvents } = runStats(run, byAgent);
    for (const { agentId, stat } of stats) {
      const a = acc(agentId, stat.name);
      a.calls += stat.calls;
      a.failures += stat.failures;
      a.totalMs += stat.totalMs;
      a.outputChars += stat.outputChars;
    }
    for (const t of run.events?.tools ?? []) {
      if (!t.denied) continue;
      const a = acc(byAgent ? (t.agentId ?? '?') : null, t.name);
      a.denied += 1;
      // Rows from the metrics files counted the denied call as a failed execution: take it out again.
      if (!fromEvents) {
        a.failures = Math.max(0, a.failures - 1);
        a.deniedMs += (t.seconds ?? 0) * 1000;
      }
    }
  }
  const out = [...rows.values()].map((a) => {
    // A denied call missing from the source's own count (a metrics file without it) is still a call.
    const calls = Math.max(a.calls, a.denied);
    const ran = calls - a.denied;
    const ms = Math.max(0, a.totalMs - a.deniedMs);
    return {
      agentId: a.agentId,
      name: a.name,
      calls,
      failures: Math.min(a.failures, ran),
      denied: a.denied,
      totalSeconds: round(ms / 1000),
      avgSeconds: ran > 0 ? round(ms / ran / 1000) : 0,
      outputChars: a.outputChars,
    };
  });
  const byCalls = options.sort === 'calls';
  return out.sort(
    (a, b) =>
      (byCalls ? b.calls - a.calls || b.totalSeconds - a.totalSeconds : b.totalSeconds - a.totalSeconds || b.calls - a.calls) ||
      (a.agentId ?? '').localeCompare(b.agentId ?? '') ||
      a.name.localeCompare(b.name),
  );
}
