// Data behind `refinery logs list`: one row per session (log_*), like `massgen logs list`, but with
// wall-clock duration and a stricter "analyzed" (a non-empty report newer than every file of the turn).
import path from 'node:path';
import { listDir, lstatSafe } from './fs-safe.ts';
import { listSessions, reportDirOf, turnUnitsOfSession } from './discover.ts';
import type { TurnUnit } from './model.ts';
import { readRun } from './read-run.ts';
import { wallClock } from './analysis-timing.ts';
import { costSummary } from './analysis-cost.ts';

export const REPORT_FILE = 'ANALYSIS_REPORT.md';
export const ANALYSIS_FILE = 'analysis.json';

export interface SessionRow {
  session: string;
  dir: string;
  /** `YYYY-MM-DD HH:MM` from the dir name, or the raw name. */
  timestamp: string;
  turns: number;
  analyzedTurns: number;
  wallClockSeconds: number | null;
  costUsd: number | null;
  question: string | null;
}

export function timestampOf(name: string): string {
  const m = /^log_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})\d{2}(?:_\d{6})?$/.exec(name);
  return m ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}` : name;
}

/** Newest mtime of the files of a turn (bounded depth, no symlinks), ignoring the analysis outputs. */
async function newestTurnFile(dir: string, skipTurns: boolean, depth = 0): Promise<number> {
  let newest = 0;
  for (const e of await listDir(dir)) {
    if (depth === 0 && (e.name === REPORT_FILE || e.name === ANALYSIS_FILE || e.name.startsWith(`.${REPORT_FILE}`) || e.name.startsWith(`.${ANALYSIS_FILE}`))) continue;
    if (e.kind === 'file') newest = Math.max(newest, e.mtimeMs);
    else if (e.kind === 'dir' && depth < 4 && e.name !== 'workspace' && !(skipTurns && depth === 0 && /^turn_\d+$/.test(e.name))) {
      newest = Math.max(newest, await newestTurnFile(e.path, skipTurns, depth + 1));
    }
  }
  return newest;
}

/** A turn is analyzed when its report is non-empty and newer than every other file of the turn. */
export async function isAnalyzed(unit: TurnUnit): Promise<boolean> {
  const dir = reportDirOf(unit);
  const report = await lstatSafe(path.join(dir, REPORT_FILE));
  if (!report || report.kind !== 'file' || report.bytes === 0) return false;
  return report.mtimeMs >= (await newestTurnFile(dir, unit.turnDir === null));
}

export async function sessionRow(dir: string): Promise<SessionRow> {
  const units = await turnUnitsOfSession(dir);
  let analyzed = 0;
  let seconds: number | null = null;
  let cost: number | null = null;
  let question: string | null = null;
  for (const unit of units) {
    if (await isAnalyzed(unit)) analyzed += 1;
    const warn = (): void => {};
    const runs = [];
    for (const attempt of unit.attempts) runs.push(await readRun(attempt, warn, { baseDir: reportDirOf(unit), skipStreams: true, subagents: false }));
    const wall = wallClock(runs).seconds;
    if (wall !== null) seconds = (seconds ?? 0) + wall;
    const c = costSummary(runs).totalUsd;
    if (c !== null) cost = (cost ?? 0) + c;
    question ??= runs.map((r) => r.status?.question ?? r.metrics?.question ?? r.coordination?.userPrompt ?? r.metadata?.query).find((q) => q) ?? null;
  }
  const name = path.basename(dir);
  return {
    session: name, dir, timestamp: timestampOf(name), turns: units.length, analyzedTurns: analyzed,
    wallClockSeconds: seconds === null ? null : Math.round(seconds * 1000) / 1000,
    costUsd: cost === null ? null : Math.round(cost * 1e6) / 1e6, question,
  };
}

export interface ListOptions {
  filter?: 'analyzed' | 'unanalyzed';
  limit?: number;
}

/** Newest session first; the filter applies before the limit (as in MassGen). */
export async function listLogRows(logsDir: string, options: ListOptions = {}): Promise<SessionRow[]> {
  const sessions = (await listSessions(logsDir)).reverse();
  const rows: SessionRow[] = [];
  for (const dir of sessions) {
    if (options.limit !== undefined && rows.length >= options.limit) break;
    const row = await sessionRow(dir);
    const done = row.turns > 0 && row.analyzedTurns === row.turns;
    if (options.filter === 'analyzed' && !done) continue;
    if (options.filter === 'unanalyzed' && done) continue;
    rows.push(row);
  }
  return rows;
}
