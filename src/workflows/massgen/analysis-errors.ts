// Errors & issues: enforcement retries by reason code, buffer loss, API errors, agent errors,
// timeouts, exceptions and failed tool calls, each tagged with the file it came from.
import type { EnforcementRow, ErrorSummary } from './analysis-model.ts';
import { isoOfEpoch } from './clock.ts';
import type { RunData } from './model.ts';

const API_REASONS = new Set(['api_error', 'fatal_api_error', 'connection_recovery', 'mcp_disconnected']);

function enforcementRows(runs: RunData[]): EnforcementRow[] {
  return runs.flatMap((run) =>
    (run.status?.agents ?? []).flatMap((a) =>
      a.enforcement.map((e) => ({
        agentId: a.id,
        attempt: run.attempt,
        round: e.round,
        retry: e.attempt,
        reason: e.reason,
        toolCalls: e.toolCalls,
        bufferChars: e.bufferChars,
        message: e.errorMessage ? e.errorMessage.slice(0, 300) : null,
      })),
    ),
  );
}

function byReason(rows: EnforcementRow[]): ErrorSummary['enforcementByReason'] {
  const groups = new Map<string, { count: number; agents: Set<string> }>();
  for (const r of rows) {
    const g = groups.get(r.reason) ?? { count: 0, agents: new Set<string>() };
    g.count += 1;
    g.agents.add(r.agentId);
    groups.set(r.reason, g);
  }
  return [...groups.entries()]
    .sort(([a, x], [b, y]) => y.count - x.count || a.localeCompare(b))
    .map(([reason, g]) => ({ reason, count: g.count, agents: [...g.agents].sort() }));
}

function maxPerRound(rows: EnforcementRow[]): number {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.agentId}|${r.attempt}|${r.round ?? '?'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Math.max(0, ...counts.values());
}

function apiErrors(runs: RunData[]): ErrorSummary['apiErrors'] {
  const out: ErrorSummary['apiErrors'] = [];
  for (const run of runs) {
    const fromStatus = (run.status?.agents ?? []).flatMap((a) =>
      a.enforcement
        .filter((e) => API_REASONS.has(e.reason))
        .map((e) => ({
          agentId: a.id,
          time: isoOfEpoch(e.timestamp),
          message: `${e.reason}: ${e.errorMessage ?? ''}`.slice(0, 300),
          source: 'status.json reliability',
        })),
    );
    if (fromStatus.length > 0) {
      out.push(...fromStatus);
      continue;
    }
    const fromEvents = (run.events?.errors ?? []).map((e) => ({
      agentId: e.agentId,
      time: e.timestamp,
      message: e.message.slice(0, 300),
      source: `events.jsonl ${e.source}`,
    }));
    if (fromEvents.length > 0) {
      out.push(...fromEvents);
      continue;
    }
    for (const e of run.massgenLog?.errors ?? []) {
      if (/stream|api|error code|connection|rate limit/i.test(e.message))
        out.push({ agentId: null, time: e.time, message: e.message.slice(0, 300), source: `massgen.log line ${e.line}` });
    }
  }
  return out;
}

function agentErrors(runs: RunData[]): ErrorSummary['agentErrors'] {
  const out: ErrorSummary['agentErrors'] = [];
  for (const run of runs) {
    for (const a of run.status?.agents ?? [])
      if (a.error) out.push({ agentId: a.id, type: a.error.type, message: a.error.message.slice(0, 300), source: 'status.json' });
    for (const e of run.coordination?.events ?? []) {
      if (e.type === 'agent_error' && e.agentId)
        out.push({ agentId: e.agentId, type: 'error', message: e.details.slice(0, 300), source: 'coordination_events.json' });
    }
  }
  return out;
}

function timeouts(runs: RunData[]): ErrorSummary['timeouts'] {
  const out: ErrorSummary['timeouts'] = [];
  for (const run of runs) {
    if (run.status?.finishReason === 'timeout')
      out.push({ agentId: null, message: run.status.finishReasonDetails ?? 'orchestrator timeout', source: 'status.json finish_reason' });
    for (const a of run.status?.agents ?? [])
      if (a.status === 'timeout' || a.error?.type === 'timeout')
        out.push({ agentId: a.id, message: a.error?.message ?? 'agent timed out', source: 'status.json' });
    for (const e of run.coordination?.events ?? [])
      if (e.type === 'agent_timeout')
        out.push({ agentId: e.agentId, message: e.details.slice(0, 300), source: 'coordination_events.json' });
    for (const t of run.events?.timeouts ?? []) out.push({ agentId: null, message: t.reason, source: 'events.jsonl orchestrator_timeout' });
    for (const t of run.massgenLog?.timeouts ?? [])
      out.push({ agentId: null, message: t.message.slice(0, 300), source: `massgen.log line ${t.line}` });
  }
  return out;
}

/** The denied calls of a run by agent and tool: they show in metrics_events.json as failed executions. */
function deniedKeys(run: RunData): Map<string, number> {
  const keys = new Map<string, number>();
  for (const t of run.events?.tools ?? []) if (t.denied) keys.set(`${t.agentId}|${t.name}`, (keys.get(`${t.agentId}|${t.name}`) ?? 0) + 1);
  return keys;
}

function failedTools(runs: RunData[]): ErrorSummary['failedToolCalls'] {
  const out: ErrorSummary['failedToolCalls'] = [];
  for (const run of runs) {
    const denied = deniedKeys(run);
    const metrics = (run.metricsEvents?.toolExecutions ?? []).filter((t) => {
      if (t.success) return false;
      const key = `${t.agentId}|${t.toolName}`;
      const left = denied.get(key) ?? 0;
      if (left === 0) return true;
      denied.set(key, left - 1);
      return false;
    });
    if (run.metricsEvents)
      out.push(
        ...metrics.map((t) => ({
          tool: t.toolName,
          agentId: t.agentId,
          message: (t.errorMessage ?? '').slice(0, 300),
          source: 'metrics_events.json',
        })),
      );
    else if (run.events)
      out.push(
        ...run.events.tools
          .filter((t) => t.isError && !t.denied)
          .map((t) => ({ tool: t.name, agentId: t.agentId, message: (t.reason ?? '').slice(0, 300), source: 'events.jsonl' })),
      );
    else
      for (const s of run.snapshots)
        for (const c of s.trace?.toolCalls ?? [])
          if (c.isError) out.push({ tool: c.tool, agentId: s.agentId, message: '', source: `${s.relDir}/execution_trace.md` });
  }
  return out.slice(0, 100);
}

function deniedTools(runs: RunData[]): ErrorSummary['deniedToolCalls'] {
  return runs
    .flatMap((run) =>
      (run.events?.tools ?? [])
        .filter((t) => t.denied)
        .map((t) => ({ tool: t.name, agentId: t.agentId, reason: (t.reason ?? '').slice(0, 300), source: 'events.jsonl' })),
    )
    .slice(0, 100);
}

export function errorSummary(runs: RunData[]): ErrorSummary {
  const rows = enforcementRows(runs);
  const statusLost = runs.reduce((s, r) => s + (r.status?.agents ?? []).reduce((t, a) => t + a.bufferCharsLost, 0), 0);
  const rowLost = rows.reduce((s, r) => s + r.bufferChars, 0);
  const level = (name: string): number => runs.reduce((s, r) => s + (r.massgenLog?.byLevel[name] ?? 0), 0);
  return {
    enforcement: rows,
    enforcementByReason: byReason(rows),
    maxRetriesInOneRound: maxPerRound(rows),
    bufferCharsLost: Math.max(statusLost, rowLost),
    apiErrors: apiErrors(runs),
    agentErrors: agentErrors(runs),
    timeouts: timeouts(runs),
    exceptions: runs
      .flatMap((r) =>
        (r.massgenLog?.exceptions ?? []).map((e) => ({ source: 'massgen.log', line: e.line, message: e.message.slice(0, 300) })),
      )
      .slice(0, 100),
    failedToolCalls: failedTools(runs),
    deniedToolCalls: deniedTools(runs),
    mcpErrors: runs.flatMap((r) => r.massgenLog?.mcpErrors ?? []).slice(0, 100),
    logErrorLines: level('ERROR') + level('CRITICAL'),
    logWarningLines: level('WARNING'),
  };
}
