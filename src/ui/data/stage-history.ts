// A stage across the pipeline's recent runs: its last durations and outcomes, the artifacts it had
// rejected (with their errors: JSON pointer + message) and the tail of its newest log.
import type { RunStore, RunStage } from './runs.ts';

export interface StageHistory {
  runs: Array<{ runId: string; status: RunStage['status']; durationMs: number | null; endedAt: string | null; reason: string | null }>;
  rejected: Array<{ runId: string; dir: string | null; issues: NonNullable<RunStage['issues']> }>;
  log: { runId: string; lines: Array<{ time: string; stream: string; message: string }>; total: number } | null;
}

export async function stageHistory(
  runs: RunStore,
  pipeline: string,
  stageId: string,
  options: { maxRuns?: number; logTail?: number } = {},
): Promise<StageHistory> {
  const maxRuns = options.maxRuns ?? 12;
  const out: StageHistory = { runs: [], rejected: [], log: null };
  let scanned = 0;
  let logRun: string | undefined;
  for (const runId of runs.ids()) {
    const row = runs.row(runId);
    if (!row || row.pipeline !== pipeline) continue;
    if (scanned >= maxRuns) break;
    scanned += 1;
    const detail = await runs.detail(runId);
    const stage = detail?.stages.find((s) => s.id === stageId);
    if (!stage) continue;
    logRun ??= runId;
    out.runs.push({ runId, status: stage.status, durationMs: stage.durationMs, endedAt: stage.endedAt, reason: stage.reason ?? null });
    if (stage.issues && stage.issues.length > 0) out.rejected.push({ runId, dir: stage.rejectedDir ?? null, issues: stage.issues });
  }
  if (logRun) out.log = { runId: logRun, ...(await runs.logs(logRun, stageId, options.logTail ?? 200)) };
  return out;
}
