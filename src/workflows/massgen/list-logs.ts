// Data behind `refinery logs list`: one row per session (log_*), like `massgen logs list`, but with
// wall-clock duration, a stricter "analyzed" (a non-empty report newer than every file of the
// turn), and the MassGen session a folder continues (`massgen --session-id`).
// A turn whose analysis is current gives its figures from analysis.json (through the summary's
// digest cache, by stat); others from status.json and metrics_summary.json; a legacy run with
// neither is read in full.
import path from 'node:path';
import { costSummary } from './analysis-cost.ts';
import { wallClock } from './analysis-timing.ts';
import type { DigestCache } from './digest-cache.ts';
import { resolveTurnUnit } from './discover.ts';
import { quickFigures, quickSessionMarker } from './quick-read.ts';
import { readRun } from './read-run.ts';
import { reportDirIn, type ReportLocation } from './report-location.ts';
import { scanSession, scanSessions, type ScannedTurn } from './scan-logs.ts';
import { strongestMarker, type SessionMarker } from './session-marker.ts';
import { ANALYSIS_FILE, newestTurnFileMs, nonEmptyFileMtime, REPORT_FILE } from './turn-freshness.ts';

export { ANALYSIS_FILE, REPORT_FILE } from './turn-freshness.ts';

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
  /** The MassGen session id (session_YYYYMMDD_HHMMSS) the folder's files name, if any. */
  massgenSession: string | null;
  /** The log folder this one continues (same MassGen session, started there), or null. */
  continues: string | null;
}

export function timestampOf(name: string): string {
  const m = /^log_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})\d{2}(?:_\d{6})?$/.exec(name);
  return m ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}` : name;
}

interface TurnFacts {
  analyzed: boolean;
  wallClockSeconds: number | null;
  costUsd: number | null;
  question: string | null;
  marker: SessionMarker | null;
}

/** Every attempt of a legacy run read in full: the only source when there is no status.json or metrics. */
async function slowFigures(t: ScannedTurn): Promise<Pick<TurnFacts, 'wallClockSeconds' | 'costUsd' | 'question'>> {
  const resolved = await resolveTurnUnit(t.turnDir ?? t.sessionDir);
  if (!resolved.ok) return { wallClockSeconds: null, costUsd: null, question: null };
  const runs = [];
  for (const attempt of resolved.unit.attempts)
    runs.push(await readRun(attempt, () => {}, { baseDir: t.turnDir ?? t.sessionDir, skipStreams: true, subagents: false }));
  return {
    wallClockSeconds: wallClock(runs).seconds,
    costUsd: costSummary(runs).totalUsd,
    question:
      runs.map((r) => r.status?.question ?? r.metrics?.question ?? r.coordination?.userPrompt ?? r.metadata?.query).find((q) => q) ?? null,
  };
}

async function turnFacts(t: ScannedTurn, location: ReportLocation, cache: DigestCache | null, wantMarker: boolean): Promise<TurnFacts> {
  const dir = reportDirIn(location, { logDir: t.sessionDir, turnDir: t.turnDir });
  const report = nonEmptyFileMtime(path.join(dir, REPORT_FILE));
  const newest = report === null ? 0 : newestTurnFileMs(t.turnDir ?? t.sessionDir, t.turnDir === null);
  const analyzed = report !== null && report >= newest;
  const analysisMtime = analyzed && cache ? nonEmptyFileMtime(path.join(dir, ANALYSIS_FILE)) : null;
  if (cache && analysisMtime !== null && analysisMtime >= newest) {
    const read = cache.read(path.join(dir, ANALYSIS_FILE));
    if (read.ok) {
      const d = read.digest;
      return {
        analyzed,
        wallClockSeconds: d.wallClockSeconds,
        costUsd: d.costMicros === null ? null : d.costMicros / 1e6,
        question: d.question,
        marker: d.massgenSession,
      };
    }
  }
  let wall: number | null = null;
  let cost: number | null = null;
  let question: string | null = null;
  let known = false;
  for (const runDir of t.runDirs) {
    const f = quickFigures(runDir);
    known ||= f.known;
    if (f.wallClockSeconds !== null) wall = (wall ?? 0) + f.wallClockSeconds;
    if (f.costUsd !== null) cost = (cost ?? 0) + f.costUsd;
    question ??= f.question;
  }
  const figures = known ? { wallClockSeconds: wall, costUsd: cost, question } : await slowFigures(t);
  const first = t.runDirs[0];
  const marker = wantMarker && first ? quickSessionMarker(first, path.relative(t.sessionDir, first)) : null;
  return { analyzed, ...figures, marker };
}

const round = (x: number | null, digits: number): number | null => (x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits);

const roles = new WeakMap<SessionRow, SessionMarker['role']>();

export async function sessionRow(dir: string, location: ReportLocation, cache: DigestCache | null = null): Promise<SessionRow> {
  const turns = scanSession(dir, { besideReports: location.beside });
  const facts: TurnFacts[] = [];
  for (const [i, t] of turns.entries()) facts.push(await turnFacts(t, location, cache, i === 0 || facts.every((f) => f.marker === null)));
  const sum = (pick: (f: TurnFacts) => number | null): number | null =>
    facts.reduce<number | null>((s, f) => (pick(f) === null ? s : (s ?? 0) + (pick(f) as number)), null);
  const name = path.basename(dir);
  const marker = strongestMarker(facts.flatMap((f) => (f.marker ? [f.marker] : [])));
  const row: SessionRow = {
    session: name,
    dir,
    timestamp: timestampOf(name),
    turns: turns.length,
    analyzedTurns: facts.filter((f) => f.analyzed).length,
    wallClockSeconds: round(
      sum((f) => f.wallClockSeconds),
      3,
    ),
    costUsd: round(
      sum((f) => f.costUsd),
      6,
    ),
    question: facts.map((f) => f.question).find((q) => q) ?? null,
    massgenSession: marker?.id ?? null,
    continues: null,
  };
  if (marker) roles.set(row, marker.role);
  return row;
}

export interface ListOptions {
  filter?: 'analyzed' | 'unanalyzed';
  limit?: number;
  /** Where the reports are (default: beside the turns). */
  location?: ReportLocation;
  /** The summary's digest cache: current analyses give their figures by stat. */
  cache?: DigestCache;
}

/**
 * The folder each continuing row continues: the one whose massgen.log says it created the session
 * (else the oldest naming it). Unlisted folders are looked at only when no listed one created it.
 */
function linkContinuations(rows: SessionRow[], all: string[]): void {
  const continuing = rows.filter((r) => r.massgenSession !== null && roles.get(r) === 'continued');
  if (continuing.length === 0) return;
  const creators = new Map<string, { folder: string; created: boolean }>();
  const consider = (id: string, folder: string, created: boolean): void => {
    const known = creators.get(id);
    if (!known || (created && !known.created) || (created === known.created && folder < known.folder))
      creators.set(id, { folder, created });
  };
  for (const r of rows) if (r.massgenSession) consider(r.massgenSession, r.session, roles.get(r) === 'created');
  const missing = new Set(continuing.map((r) => r.massgenSession as string).filter((id) => !creators.get(id)?.created));
  const listed = new Set(rows.map((r) => r.dir));
  if (missing.size > 0) {
    for (const dir of all) {
      if (listed.has(dir)) continue;
      for (const t of scanSession(dir)) {
        const first = t.runDirs[0];
        const marker = first ? quickSessionMarker(first, '') : null;
        if (marker && missing.has(marker.id)) consider(marker.id, path.basename(dir), marker.role === 'created');
      }
    }
  }
  for (const row of continuing) {
    const creator = creators.get(row.massgenSession as string);
    if (creator && creator.folder !== row.session) row.continues = creator.folder;
  }
}

/** Newest session first; the filter applies before the limit (as in MassGen). */
export async function listLogRows(logsDir: string, options: ListOptions = {}): Promise<SessionRow[]> {
  const location = options.location ?? { logsDir, reportsRoot: logsDir, beside: true };
  const cache = options.cache ?? null;
  const all = scanSessions(logsDir);
  const rows: SessionRow[] = [];
  for (const dir of [...all].reverse()) {
    if (options.limit !== undefined && rows.length >= options.limit) break;
    const row = await sessionRow(dir, location, cache);
    const done = row.turns > 0 && row.analyzedTurns === row.turns;
    if (options.filter === 'analyzed' && !done) continue;
    if (options.filter === 'unanalyzed' && done) continue;
    rows.push(row);
  }
  linkContinuations(rows, all);
  return rows;
}
