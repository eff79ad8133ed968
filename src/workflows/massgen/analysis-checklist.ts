// Checklist-gated phases of a round (log-analyzer skill, "Evaluation vs Implementation Timing"):
// evaluation runs from the round's start to its first submit_checklist call; a draft_approach
// after it ends the checklist→propose window, and implementation runs from its end to the
// round's end. A round with a checklist but no proposal is all post-checklist after it.
import type { ChecklistPhases, ChecklistRoundRow } from './analysis-model.ts';
import { round } from './coerce.ts';
import type { RunData, ToolExecution } from './model.ts';
import { roundsOf } from './analysis-timing.ts';

/** MassGen's MCP tools carry a server prefix (`mcp__quality__submit_checklist`); the bare name is matched. */
export function isTool(execution: ToolExecution, name: string): boolean {
  return execution.toolName === name || execution.toolName.endsWith(`__${name}`) || execution.toolName.endsWith(`.${name}`);
}

function roundPhases(run: RunData, tools: readonly ToolExecution[]): ChecklistRoundRow[] {
  const rows: ChecklistRoundRow[] = [];
  for (const r of roundsOf(run)) {
    if (r.startTime === null || r.endTime === null) continue;
    const start = r.startTime;
    const end = r.endTime;
    const inRound = tools
      .filter((t) => t.agentId === r.agentId && t.startTime !== null && t.startTime >= start && t.startTime <= end)
      .sort((a, b) => (a.startTime ?? 0) - (b.startTime ?? 0));
    const checklist = inRound.find((t) => isTool(t, 'submit_checklist'));
    if (!checklist || checklist.startTime === null) continue;
    const checklistAt = checklist.startTime;
    const propose = inRound.find((t) => isTool(t, 'draft_approach') && (t.startTime ?? 0) >= checklistAt);
    const proposeEnd = propose ? Math.min(end, (propose.startTime ?? checklistAt) + propose.executionMs / 1000) : null;
    rows.push({
      agentId: r.agentId,
      attempt: run.attempt,
      round: r.roundNumber,
      evaluationSeconds: round(checklistAt - start),
      checklistToProposeSeconds: proposeEnd === null ? null : round(proposeEnd - checklistAt),
      implementationSeconds: proposeEnd === null ? null : round(end - proposeEnd),
      postChecklistSeconds: proposeEnd === null ? round(end - checklistAt) : null,
    });
  }
  return rows;
}

export function checklistPhases(runs: readonly RunData[]): ChecklistPhases {
  const rounds = runs.flatMap((run) => roundPhases(run, run.metricsEvents?.toolExecutions ?? []));
  rounds.sort((a, b) => a.agentId.localeCompare(b.agentId) || a.attempt - b.attempt || a.round - b.round);
  const evaluation = rounds.reduce((sum, r) => sum + r.evaluationSeconds, 0);
  const implementation = rounds.reduce((sum, r) => sum + (r.implementationSeconds ?? 0), 0);
  const both = evaluation + implementation;
  return {
    rounds,
    evaluationSeconds: round(evaluation),
    implementationSeconds: round(implementation),
    evaluationPct: both > 0 ? round((evaluation / both) * 100, 1) : null,
    implementationPct: both > 0 ? round((implementation / both) * 100, 1) : null,
  };
}
