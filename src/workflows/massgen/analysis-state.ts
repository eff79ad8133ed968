// Whether a turn finished, is still running, or died (spec §7 "missing end-of-run files").
//
// Rule (documented in the analysis as `state.rule`):
// 1. The last attempt's status.json finish_reason, when it is anything but `in_progress`, decides
//    (`completed`, `error`, `timeout`, `waiting_for_review`).
// 2. Without it, end-of-run files (metrics_summary.json, coordination_events.json, snapshot_mappings.json,
//    coordination_table.txt or a final/ dir) mean `completed`.
// 3. Otherwise the run is unfinished. Its heartbeat is status.json `meta.last_updated` (MassGen rewrites
//    it every 2 s while the process lives, and copying the tree does not change it), else the newest
//    file mtime of the last attempt; when both exist the EARLIER one counts (a copied dead run has new
//    mtimes but an old heartbeat; a clock-skewed heartbeat from the future is capped by the mtime).
//    A heartbeat younger than `staleAfterSeconds` means `in_progress`; older means `incomplete`.
import type { StateInfo, RunState } from './analysis-model.ts';
import { isoOfEpoch } from './clock.ts';
import type { RunData } from './model.ts';

export const DEFAULT_STALE_AFTER_SECONDS = 120;

export const STATE_RULE =
  'finish_reason (if not in_progress) decides; else end-of-run files (metrics_summary, coordination_events, ' +
  'snapshot_mappings, coordination_table, final/) mean completed; else heartbeat = the earlier of status.json ' +
  'meta.last_updated and the newest file mtime; younger than staleAfterSeconds = in_progress, older = incomplete';

const FINISHED: Record<string, RunState> = {
  completed: 'completed',
  error: 'error',
  timeout: 'timeout',
  waiting_for_review: 'waiting_for_review',
};

const END_OF_RUN = ['metrics_summary.json', 'coordination_events.json', 'snapshot_mappings.json', 'coordination_table.txt'];

/** Files MassGen writes only when a turn ends (a cut-off copy still counts), or a final/ dir. */
export function hasEndOfRunFiles(run: RunData): boolean {
  const names = new Set(run.files.map((f) => f.path));
  const at = (name: string): string => (run.relDir ? `${run.relDir}/${name}` : name);
  return END_OF_RUN.some((name) => names.has(at(name))) || run.finalAgents.length > 0;
}

export function decideState(runs: RunData[], nowMs: number, staleAfterSeconds: number): StateInfo {
  const last = runs[runs.length - 1];
  const base = {
    finishReason: last?.status?.finishReason ?? null,
    finishReasonDetails: last?.status?.finishReasonDetails ?? null,
    isComplete: last?.status?.isComplete ?? null,
    staleAfterSeconds,
    rule: STATE_RULE,
  };
  const none = { heartbeatSource: 'none' as const, lastActivity: null, ageSeconds: null };
  if (!last) return { value: 'unknown', ...base, ...none };
  const reason = base.finishReason;
  if (reason && FINISHED[reason]) return { value: FINISHED[reason] ?? 'unknown', ...base, ...none };
  if (reason !== 'in_progress' && base.isComplete === true) return { value: 'completed', ...base, ...none };
  if (reason !== 'in_progress' && hasEndOfRunFiles(last)) return { value: 'completed', ...base, ...none };
  const heartbeat = last.status?.lastUpdated ?? null;
  const mtime = last.newestMtimeMs !== null ? last.newestMtimeMs / 1000 : null;
  const useHeartbeat = heartbeat !== null && (mtime === null || heartbeat <= mtime);
  const epoch = useHeartbeat ? heartbeat : mtime;
  if (epoch === null) return { value: 'unknown', ...base, ...none };
  const age = Math.round((nowMs / 1000 - epoch) * 1000) / 1000;
  return {
    value: age <= staleAfterSeconds ? 'in_progress' : 'incomplete',
    ...base,
    heartbeatSource: useHeartbeat ? 'status.meta.last_updated' : 'newest-file-mtime',
    lastActivity: isoOfEpoch(epoch),
    ageSeconds: age,
  };
}
