// A quick synchronous scan of a logs folder for the commands that look at every run at once
// (`logs summary`, `logs list`): the turns of every log_* folder, with the mtimes of their run
// folders. MassGen replaces status.json every 2 s while a run lives (temp file + rename) and adds
// files as it goes, so a run that is still being written moves these mtimes; a finished run's
// folders stay still. When the reports sit beside the turns, a folder that also receives
// analysis.json is judged by its entries instead (our own writes move its mtime). The layouts
// are those of discover.ts (spec §1.2); symlinks are not followed.
import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { RUN_MARKERS } from './discover.ts';
import { numberedName } from './fs-safe.ts';

export interface ScannedTurn {
  session: string;
  sessionDir: string;
  turn: number;
  /** turn_N, or null for a legacy run at the folder's root. */
  turnDir: string | null;
  /** The run folders: attempt_M dirs, or the turn (or root) itself. */
  runDirs: string[];
  /** Newest mtime of the run folders (and of the turn folder when no report is written into it). */
  folderMtimeMs: number;
}

export interface ScanOptions {
  /** Reports are written into the turn folders (and legacy roots): their own mtime is no signal. */
  besideReports?: boolean;
}

const OWN_OUTPUTS = /^\.?(analysis\.json|ANALYSIS_REPORT\.md)/;

/** Newest mtime of a folder's direct entries, our own outputs left out. */
function entriesMtime(dir: string): number {
  let newest = 0;
  for (const e of list(dir)) {
    if (OWN_OUTPUTS.test(e.name) || /^turn_\d+$/.test(e.name)) continue;
    newest = Math.max(newest, mtime(path.join(dir, e.name)));
  }
  return newest;
}

function list(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function mtime(dir: string): number {
  try {
    return statSync(dir).mtimeMs;
  } catch {
    return 0;
  }
}

function numbered(entries: Dirent[], dir: string, prefix: string): { n: number; path: string }[] {
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => ({ n: numberedName(e.name, prefix), path: path.join(dir, e.name) }))
    .filter((x): x is { n: number; path: string } => x.n !== null)
    .sort((a, b) => a.n - b.n);
}

function hasAgentSnapshots(entries: Dirent[], dir: string): boolean {
  return entries.some(
    (e) => e.isDirectory() && list(path.join(dir, e.name)).some((c) => c.isDirectory() && /^\d{8}_\d{6}_\d{6}$/.test(c.name)),
  );
}

/** The log_* folders directly in a logs folder, by name. */
export function scanSessions(logsDir: string): string[] {
  return list(logsDir)
    .filter((e) => e.isDirectory() && e.name.startsWith('log_'))
    .map((e) => path.join(logsDir, e.name))
    .sort();
}

/** The turns of one log_* folder, as discover.ts's turnUnitsOfSession finds them. */
export function scanSession(sessionDir: string, options: ScanOptions = {}): ScannedTurn[] {
  const session = path.basename(sessionDir);
  const entries = list(sessionDir);
  const turns = numbered(entries, sessionDir, 'turn');
  const out: ScannedTurn[] = [];
  const rootAttempts = numbered(entries, sessionDir, 'attempt');
  // The folder that receives the report: its own mtime moves with every report written into it.
  const holder = (dir: string): number => (options.besideReports ? entriesMtime(dir) : mtime(dir));
  if (rootAttempts.length > 0) {
    const runDirs = rootAttempts.map((a) => a.path);
    out.push({
      session,
      sessionDir,
      turn: turns.length > 0 ? 0 : 1,
      turnDir: null,
      runDirs,
      folderMtimeMs: Math.max(holder(sessionDir), ...runDirs.map(mtime)),
    });
  } else if (
    entries.some((e) => e.isFile() && RUN_MARKERS.has(e.name)) ||
    hasAgentSnapshots(
      entries.filter((e) => !/^turn_\d+$/.test(e.name)),
      sessionDir,
    )
  ) {
    out.push({
      session,
      sessionDir,
      turn: turns.length > 0 ? 0 : 1,
      turnDir: null,
      runDirs: [sessionDir],
      folderMtimeMs: holder(sessionDir),
    });
  }
  for (const t of turns) {
    const attempts = numbered(list(t.path), t.path, 'attempt');
    const runDirs = attempts.length > 0 ? attempts.map((a) => a.path) : [t.path];
    // Beside the report, a new attempt folder is seen by the count of run folders instead.
    const turnMtime = attempts.length > 0 && options.besideReports ? 0 : holder(t.path);
    out.push({
      session,
      sessionDir,
      turn: t.n,
      turnDir: t.path,
      runDirs,
      folderMtimeMs: Math.max(turnMtime, ...(attempts.length > 0 ? runDirs.map(mtime) : [])),
    });
  }
  return out;
}

export function scanLogs(logsDir: string, options: ScanOptions = {}): ScannedTurn[] {
  return scanSessions(logsDir).flatMap((s) => scanSession(s, options));
}
