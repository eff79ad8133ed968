// MassGen logs as the dashboard shows them: sessions (what `refinery logs list` lists) from the
// folders, numbers from each turn's analysis.json (what `refinery run analyze` wrote), and, for one
// turn, the report, every answer with its text and every vote. Folders are listed without following
// symlinks; every file is read with a size cap; rows are cached and checked by folder mtimes, so a
// 1,000-run folder is read once and then only what changed.
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { listSessions, resolveTurnUnit, reportDirOf, turnUnitsOfSession } from '../../workflows/massgen/discover.ts';
import { readCapped } from '../../workflows/massgen/fs-safe.ts';
import { timestampOf } from '../../workflows/massgen/list-logs.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';
import { realRoot, relativeInProject, safeSegments } from '../safe-path.ts';
import { isObject } from './jsonl.ts';

export interface TurnRow {
  turn: number;
  /** Root-relative folder of the turn's report (turn_N/, or the session for legacy flat logs). */
  dir: string;
  analyzed: boolean;
  state: string | null;
  question: string | null;
  winner: string | null;
  winnerModel: string | null;
  costUsd: number | null;
  wallClockSeconds: number | null;
  enforcementRetries: number | null;
  agents: number | null;
  answers: number | null;
  votes: number | null;
  apiErrors: number | null;
}

export interface SessionRow {
  session: string;
  dir: string;
  logsDir: string;
  timestamp: string;
  turns: TurnRow[];
  question: string | null;
  costUsd: number | null;
  wallClockSeconds: number | null;
  enforcementRetries: number | null;
  state: string | null;
  analyzedTurns: number;
}

export type SessionSort = 'time' | 'cost' | 'duration' | 'retries' | 'turns';

export interface SessionQuery {
  offset: number;
  limit: number;
  sort: SessionSort;
  descending: boolean;
  /** Plain text, any case, found anywhere in the session name, question or a winner (never a pattern). */
  search: string;
  state: string;
  analyzed: '' | 'yes' | 'no';
}

const ANALYSIS_CAP = 32 * 1024 * 1024;
const REPORT_CAP = 4 * 1024 * 1024;
const ANSWER_CAP = 256 * 1024;

interface CachedSession {
  stamp: string;
  row: SessionRow;
}

function mtime(file: string): number {
  try {
    return lstatSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

/** The file when its real path (symlinks followed) is inside `base`'s, else null. */
function insideReal(file: string, base: string): string | null {
  try {
    const real = realpathSync.native(file);
    return real.startsWith(`${realpathSync.native(base)}${path.sep}`) ? file : null;
  } catch {
    return file;
  }
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Whether `needle` (lower case) is in the session's name, question or a turn's winner, in any case. */
function matchesText(row: SessionRow, needle: string): boolean {
  if (row.session.toLowerCase().includes(needle)) return true;
  if (row.question?.toLowerCase().includes(needle)) return true;
  return row.turns.some((t) => t.winner?.toLowerCase().includes(needle) ?? false);
}

function sum(values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.round(known.reduce((a, b) => a + b, 0) * 1e6) / 1e6;
}

/** The numbers a row shows, from an analysis.json. */
export function turnNumbers(analysis: Record<string, unknown>): Omit<TurnRow, 'turn' | 'dir' | 'analyzed'> {
  const state = isObject(analysis.state) ? str(analysis.state.value) : null;
  const winner = isObject(analysis.winner) ? str(analysis.winner.agentId) : null;
  const overview = isObject(analysis.overview) ? analysis.overview : {};
  const agents = Array.isArray(analysis.agents) ? analysis.agents.filter(isObject) : [];
  const errors = isObject(analysis.errors) ? analysis.errors : {};
  const cost = isObject(analysis.cost) ? analysis.cost : {};
  const winnerModel = winner ? str(agents.find((a) => a.id === winner)?.model) : null;
  return {
    state,
    question: str(analysis.question),
    winner,
    winnerModel,
    costUsd: num(cost.totalUsd) ?? num(overview.totalCostUsd),
    wallClockSeconds: num(overview.wallClockSeconds),
    enforcementRetries: Array.isArray(errors.enforcement) ? errors.enforcement.length : null,
    agents: num(overview.agents),
    answers: num(overview.answers),
    votes: num(overview.votes),
    apiErrors: Array.isArray(errors.apiErrors) ? errors.apiErrors.length : null,
  };
}

const EMPTY_NUMBERS = {
  state: null,
  question: null,
  winner: null,
  winnerModel: null,
  costUsd: null,
  wallClockSeconds: null,
  enforcementRetries: null,
  agents: null,
  answers: null,
  votes: null,
  apiErrors: null,
};

/** One analyzed turn on the cross-run charts (the page reads the same shape). */
export interface ChartPoint {
  session: string;
  turn: number;
  dir: string;
  time: string;
  costUsd: number | null;
  wallClockSeconds: number | null;
  enforcementRetries: number | null;
  winner: string | null;
  winnerModel: string | null;
  state: string | null;
}

export class MassGenStore {
  private readonly sessionsCache = new Map<string, CachedSession>();
  private readonly analysisCache = new Map<string, { stamp: string; numbers: ReturnType<typeof turnNumbers> | null }>();

  constructor(
    private readonly root: string,
    /** Absolute folders holding log_* sessions, all inside the project. */
    readonly logsDirs: readonly string[],
    /**
     * Where else a turn's analysis may be (absolute folder of analysis.json + ANALYSIS_REPORT.md):
     * an experiment cell's, which the experiments pipeline writes beside its experiment.json.
     */
    private readonly analysisElsewhere: (turnDir: string) => Promise<string | undefined> = async () => undefined,
  ) {}

  /** The folder holding a turn's analysis: its own report folder, else where an experiment put it. */
  private async analysisDir(reportDir: string): Promise<string> {
    if (mtime(path.join(reportDir, 'analysis.json')) >= 0) return reportDir;
    const rel = relativeInProject(this.root, reportDir);
    return (rel ? await this.analysisElsewhere(rel) : undefined) ?? reportDir;
  }

  /** Session folders of every logs folder, newest name first. */
  private async sessionDirs(): Promise<Array<{ dir: string; logsDir: string }>> {
    const out: Array<{ dir: string; logsDir: string }> = [];
    for (const logsDir of this.logsDirs) for (const dir of await listSessions(logsDir)) out.push({ dir, logsDir });
    return out.sort((a, b) => path.basename(b.dir).localeCompare(path.basename(a.dir)));
  }

  private analysisNumbers(file: string): ReturnType<typeof turnNumbers> | null {
    let stamp: string;
    try {
      const info = lstatSync(file);
      if (!info.isFile() || info.size > ANALYSIS_CAP) return null;
      stamp = `${info.size}:${info.mtimeMs}`;
    } catch {
      return null;
    }
    const cached = this.analysisCache.get(file);
    if (cached && cached.stamp === stamp) return cached.numbers;
    let numbers: ReturnType<typeof turnNumbers> | null = null;
    try {
      const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (isObject(value)) numbers = turnNumbers(value);
    } catch {
      numbers = null;
    }
    this.analysisCache.set(file, { stamp, numbers });
    return numbers;
  }

  private async row(dir: string, logsDir: string): Promise<SessionRow> {
    const cached = this.sessionsCache.get(dir);
    // The session folder changes when a turn is added; a turn folder when its analysis is renamed in.
    // An analysis kept elsewhere (an experiment cell's) counts too.
    const elsewhere = async (turns: Array<{ dir: string }>): Promise<number[]> =>
      Promise.all(turns.map(async (t) => mtime(path.join(await this.analysisDir(path.join(this.root, t.dir)), 'analysis.json'))));
    if (cached) {
      const stamp = [
        mtime(dir),
        ...cached.row.turns.map((t) => mtime(path.join(this.root, t.dir))),
        ...(await elsewhere(cached.row.turns)),
      ].join(':');
      if (stamp === cached.stamp) return cached.row;
    }
    const units = await turnUnitsOfSession(dir);
    const analysisDirs = await Promise.all(units.map((unit) => this.analysisDir(reportDirOf(unit))));
    const turns: TurnRow[] = units.map((unit, i) => {
      const reportDir = reportDirOf(unit);
      const numbers = this.analysisNumbers(path.join(analysisDirs[i] as string, 'analysis.json'));
      return {
        turn: unit.turn,
        dir: relativeInProject(this.root, reportDir) ?? '',
        analyzed: numbers !== null,
        ...(numbers ?? EMPTY_NUMBERS),
      };
    });
    const name = path.basename(dir);
    const row: SessionRow = {
      session: name,
      dir: relativeInProject(this.root, dir) ?? '',
      logsDir: relativeInProject(this.root, logsDir) ?? '',
      timestamp: timestampOf(name),
      turns,
      question: turns.find((t) => t.question)?.question ?? null,
      costUsd: sum(turns.map((t) => t.costUsd)),
      wallClockSeconds: sum(turns.map((t) => t.wallClockSeconds)),
      enforcementRetries: sum(turns.map((t) => t.enforcementRetries)),
      state: turns.at(-1)?.state ?? null,
      analyzedTurns: turns.filter((t) => t.analyzed).length,
    };
    const stamp = [mtime(dir), ...turns.map((t) => mtime(path.join(this.root, t.dir))), ...(await elsewhere(turns))].join(':');
    this.sessionsCache.set(dir, { stamp, row });
    return row;
  }

  /** Every session's row (the cross-run charts and any sort but by time need them all). */
  async allRows(): Promise<SessionRow[]> {
    const rows: SessionRow[] = [];
    for (const { dir, logsDir } of await this.sessionDirs()) rows.push(await this.row(dir, logsDir));
    return rows;
  }

  async sessions(query: SessionQuery): Promise<{ total: number; rows: SessionRow[] }> {
    // A substring, not a regular expression: a pattern from the address could backtrack for minutes
    // and hold the one thread every request and signal needs.
    const needle = query.search.toLowerCase();
    const needsAll = query.sort !== 'time' || needle !== '' || query.state !== '' || query.analyzed !== '';
    if (!needsAll) {
      // Newest first needs only the names: a 1,000-run folder's first page reads 50 sessions.
      const dirs = await this.sessionDirs();
      if (!query.descending) dirs.reverse();
      const page = dirs.slice(query.offset, query.offset + query.limit);
      const rows: SessionRow[] = [];
      for (const { dir, logsDir } of page) rows.push(await this.row(dir, logsDir));
      return { total: dirs.length, rows };
    }
    let rows = await this.allRows();
    rows = rows.filter((r) => {
      if (needle && !matchesText(r, needle)) return false;
      if (query.state && r.state !== query.state) return false;
      if (query.analyzed === 'yes' && r.analyzedTurns !== r.turns.length) return false;
      if (query.analyzed === 'no' && r.analyzedTurns === r.turns.length) return false;
      return true;
    });
    const key: Record<SessionSort, (r: SessionRow) => number | string> = {
      time: (r) => r.session,
      cost: (r) => r.costUsd ?? -1,
      duration: (r) => r.wallClockSeconds ?? -1,
      retries: (r) => r.enforcementRetries ?? -1,
      turns: (r) => r.turns.length,
    };
    const get = key[query.sort];
    rows.sort((a, b) => {
      const x = get(a);
      const y = get(b);
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return (query.descending ? -c : c) || b.session.localeCompare(a.session);
    });
    return { total: rows.length, rows: rows.slice(query.offset, query.offset + query.limit) };
  }

  /** A root-relative folder that is inside one of the logs folders (inside the project); undefined otherwise. */
  locate(rel: string): string | undefined {
    if (!safeSegments(rel, false)) return undefined;
    let real: string;
    try {
      real = realpathSync.native(path.join(this.root, rel));
    } catch {
      return undefined;
    }
    const rootReal = realRoot(this.root);
    for (const logsDir of this.logsDirs) {
      let base: string;
      try {
        base = realpathSync.native(logsDir);
      } catch {
        continue;
      }
      // A logs folder counted before it existed (MassGen's own) must still be inside the project.
      if (!base.startsWith(`${rootReal}${path.sep}`)) continue;
      if (real.startsWith(`${base}${path.sep}`)) return path.join(this.root, rel);
    }
    return undefined;
  }

  /** One turn: its analysis, report, answers (with text) and the unit's layout. */
  async turn(rel: string): Promise<Record<string, unknown> | undefined> {
    const dir = this.locate(rel);
    if (!dir) return undefined;
    const resolved = await resolveTurnUnit(dir);
    if (!resolved.ok) return undefined;
    const unit = resolved.unit;
    const reportDir = reportDirOf(unit);
    const analysisDir = await this.analysisDir(reportDir);
    const analysisText = await readCapped(path.join(analysisDir, 'analysis.json'), ANALYSIS_CAP);
    let analysis: unknown = null;
    let analysisProblem: string | null = null;
    if (analysisText.ok) {
      if (analysisText.truncated)
        analysisProblem = `analysis.json is ${analysisText.bytes} bytes, over the dashboard's ${ANALYSIS_CAP} byte limit`;
      else {
        try {
          analysis = JSON.parse(analysisText.text);
        } catch (error) {
          analysisProblem = `analysis.json is not JSON: ${(error as Error).message}`;
        }
      }
    }
    const report = await readCapped(path.join(analysisDir, 'ANALYSIS_REPORT.md'), REPORT_CAP);
    return {
      session: path.basename(unit.logDir),
      sessionDir: relativeInProject(this.root, unit.logDir),
      turn: unit.turn,
      dir: relativeInProject(this.root, reportDir),
      analysisDir: relativeInProject(this.root, analysisDir),
      layout: unit.layout,
      attempts: unit.attempts.map((a) => ({ attempt: a.attempt, dir: relativeInProject(this.root, a.dir) })),
      analysis,
      analysisProblem,
      report: report.ok ? { text: report.text, truncated: report.truncated, bytes: report.bytes } : null,
      answers: await this.answerTexts(unit),
    };
  }

  /** Every answer snapshot named by the attempts' snapshot_mappings.json, with its text (capped). */
  private async answerTexts(unit: TurnUnit): Promise<
    Array<{
      label: string;
      agentId: string;
      attempt: number;
      text: string | null;
      truncated: boolean;
      bytes: number | null;
      path: string | null;
    }>
  > {
    const out: Array<{
      label: string;
      agentId: string;
      attempt: number;
      text: string | null;
      truncated: boolean;
      bytes: number | null;
      path: string | null;
    }> = [];
    for (const attempt of unit.attempts) {
      const mappings = await readCapped(path.join(attempt.dir, 'snapshot_mappings.json'), 8 * 1024 * 1024);
      if (!mappings.ok) continue;
      let value: unknown;
      try {
        value = JSON.parse(mappings.text);
      } catch {
        continue;
      }
      if (!isObject(value)) continue;
      for (const [label, raw] of Object.entries(value)) {
        if (!isObject(raw) || raw.type !== 'answer' || typeof raw.agent_id !== 'string') continue;
        const rel = typeof raw.path === 'string' ? raw.path : null;
        const file = rel && safeSegments(rel, false) ? insideReal(path.join(attempt.dir, ...rel.split('/')), attempt.dir) : null;
        const read = file ? await readCapped(file, ANSWER_CAP) : null;
        out.push({
          label: typeof raw.label === 'string' ? raw.label : label,
          agentId: raw.agent_id,
          attempt: attempt.attempt,
          text: read?.ok ? read.text : null,
          truncated: read?.ok ? read.truncated : false,
          bytes: read?.ok ? read.bytes : null,
          path: file ? (relativeInProject(this.root, file) ?? null) : null,
        });
      }
    }
    return out;
  }

  /** One point per analyzed turn, oldest first: the cross-run charts. */
  async chartPoints(): Promise<ChartPoint[]> {
    const rows = await this.allRows();
    const points = rows.flatMap((r) =>
      r.turns
        .filter((t) => t.analyzed)
        .map((t) => ({
          session: r.session,
          turn: t.turn,
          dir: t.dir,
          time: r.timestamp,
          costUsd: t.costUsd,
          wallClockSeconds: t.wallClockSeconds,
          enforcementRetries: t.enforcementRetries,
          winner: t.winner,
          winnerModel: t.winnerModel,
          state: t.state,
        })),
    );
    return points.sort((a, b) => a.session.localeCompare(b.session) || a.turn - b.turn);
  }
}
