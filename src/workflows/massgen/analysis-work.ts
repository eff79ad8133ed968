// Tools, command patterns (repeated, excessive output, slowest) and duplicated work.
import type { CommandStats, Duplication, ToolRow } from './analysis-model.ts';
import { preview, round } from './coerce.ts';
import type { CommandRecord, RunData } from './model.ts';
import { toolTable } from './tool-table.ts';

export const EXCESSIVE_OUTPUT_CHARS = 10_000;
const WORKFLOW_TOOLS = new Set(['new_answer', 'vote', 'stop']);
const TOP = 10;

export function toolRows(runs: RunData[]): ToolRow[] {
  return toolTable(runs).map(({ agentId: _agent, ...row }) => row);
}

function traceCommands(run: RunData): CommandRecord[] {
  return run.snapshots.flatMap((s) =>
    (s.trace?.toolCalls ?? [])
      .filter((c) => c.command !== null)
      .map((c) => ({
        agentId: s.agentId,
        command: c.command ?? '',
        source: 'execution_trace.md' as const,
        seconds: null,
        outputChars: c.resultChars,
        isError: c.isError,
      })),
  );
}

/** Commands from the richest source of each attempt: events.jsonl, else traces, else streaming_debug.log. */
export function commandRecords(runs: RunData[]): { records: CommandRecord[]; sources: string[] } {
  const records: CommandRecord[] = [];
  const sources = new Set<string>();
  for (const run of runs) {
    const options = [run.events?.commands ?? [], traceCommands(run), run.streamingLog?.commands ?? []];
    const chosen = options.find((list) => list.length > 0) ?? [];
    chosen.forEach((r) => sources.add(r.source));
    records.push(...chosen);
  }
  return { records, sources: [...sources].sort() };
}

export function commandStats(runs: RunData[]): CommandStats {
  const { records, sources } = commandRecords(runs);
  const groups = new Map<string, { count: number; agents: Set<string> }>();
  for (const r of records) {
    const key = r.command.trim();
    const g = groups.get(key) ?? { count: 0, agents: new Set<string>() };
    g.count += 1;
    if (r.agentId) g.agents.add(r.agentId);
    groups.set(key, g);
  }
  const repeated = [...groups.entries()]
    .filter(([, g]) => g.count >= 2)
    .sort(([a, x], [b, y]) => y.count - x.count || a.localeCompare(b))
    .slice(0, TOP)
    .map(([command, g]) => ({ command: preview(command, 200), count: g.count, agents: [...g.agents].sort() }));
  const excessiveOutput = records
    .filter((r) => (r.outputChars ?? 0) >= EXCESSIVE_OUTPUT_CHARS)
    .sort((a, b) => (b.outputChars ?? 0) - (a.outputChars ?? 0))
    .slice(0, TOP)
    .map((r) => ({ command: preview(r.command, 200), agentId: r.agentId, outputChars: r.outputChars ?? 0 }));
  const slowest = records
    .filter((r) => r.seconds !== null)
    .sort((a, b) => (b.seconds ?? 0) - (a.seconds ?? 0))
    .slice(0, TOP)
    .map((r) => ({ command: preview(r.command, 200), agentId: r.agentId, seconds: round(r.seconds ?? 0) }));
  return { total: records.length, sources, repeated, excessiveOutput, slowest };
}

export function duplication(runs: RunData[]): Duplication {
  const calls = new Map<string, { tool: string; count: number; agents: Set<string> }>();
  const addCall = (tool: string, key: string, agentId: string | null): void => {
    if (WORKFLOW_TOOLS.has(tool)) return;
    const g = calls.get(key) ?? { tool, count: 0, agents: new Set<string>() };
    g.count += 1;
    if (agentId) g.agents.add(agentId);
    calls.set(key, g);
  };
  for (const run of runs) {
    if (run.events && run.events.tools.length > 0) run.events.tools.forEach((t) => addCall(t.name, t.argsKey, t.agentId));
    else for (const s of run.snapshots) for (const c of s.trace?.toolCalls ?? []) addCall(c.tool, c.argsKey, s.agentId);
  }
  const repeatedToolCalls = [...calls.entries()]
    .filter(([, g]) => g.count >= 2)
    .sort(([a, x], [b, y]) => y.count - x.count || a.localeCompare(b))
    .slice(0, TOP)
    .map(([key, g]) => ({ tool: g.tool, args: preview(key.slice(g.tool.length + 1), 200), count: g.count, agents: [...g.agents].sort() }));
  const answers = new Map<string, { labels: string[]; agents: Set<string>; chars: number | null }>();
  for (const run of runs) {
    const labelOf = new Map((run.mappings ?? []).map((m) => [`${m.agentId}/${m.timestamp}`, m.label]));
    for (const s of run.snapshots) {
      if (!s.answer || s.answer.chars === 0) continue;
      const g = answers.get(s.answer.hash) ?? { labels: [], agents: new Set<string>(), chars: s.answer.chars };
      g.labels.push(labelOf.get(`${s.agentId}/${s.timestamp}`) ?? s.relDir);
      g.agents.add(s.agentId);
      answers.set(s.answer.hash, g);
    }
  }
  const duplicateAnswers = [...answers.values()]
    .filter((g) => g.labels.length >= 2)
    .map((g) => ({ labels: g.labels.sort(), agents: [...g.agents].sort(), chars: g.chars }))
    .sort((a, b) => (a.labels[0] ?? '').localeCompare(b.labels[0] ?? ''));
  return { repeatedToolCalls, duplicateAnswers };
}
