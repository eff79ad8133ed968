// Which MassGen run and turn `refinery logs analyze` and `refinery logs bundle` work on.
import path from 'node:path';
import { listSessions, resolveTurnUnit, turnUnitsOfSession } from '../../workflows/massgen/discover.ts';
import { lstatSafe } from '../../workflows/massgen/fs-safe.ts';
import { logsFolderMissing } from '../../workflows/massgen/logs-folder.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';

/**
 * RUN as a user gives it: the path of a log_*, turn_N or attempt_M folder, a log_* name under
 * `logsDir`, or the # that `refinery logs list` shows (1: the newest; a folder of that name wins).
 * The folder, or why there is none.
 */
export async function runFolder(cwd: string, logsDir: string, run: string): Promise<{ folder: string } | { error: string }> {
  const asPath = path.resolve(cwd, run);
  const isPath = run.includes('/') || run.includes(path.sep) || (await lstatSafe(asPath))?.kind === 'dir';
  if (!isPath && !/^[\w.-]+$/.test(run)) return { error: `RUN '${run}' is neither a folder nor a log_* name` };
  let folder = isPath ? asPath : path.join(logsDir, run);
  // `refinery logs list` numbers its rows: newest first, as the sessions' names sort.
  if (!isPath && /^[1-9]\d*$/.test(run) && (await lstatSafe(folder))?.kind !== 'dir')
    folder = (await listSessions(logsDir)).reverse()[Number(run) - 1] ?? folder;
  const info = await lstatSafe(folder);
  if (info?.kind === 'dir') return { folder };
  if (isPath) return { error: info ? `${folder} is not a folder` : `${folder}: no such folder` };
  const missing = await logsFolderMissing(logsDir, shownLogsDir(cwd, logsDir));
  if (missing) return { error: `no run '${run}': ${missing.replace('--param logs=PATH', '--logs-dir PATH')}` };
  return {
    error: `no run '${run}' in ${logsDir} (no folder ${folder}); pass a log_* name or a # from \`refinery logs list\`, a path, or --logs-dir D`,
  };
}

/** A logs folder inside the project by its relative path, one outside by its absolute path. */
function shownLogsDir(cwd: string, logsDir: string): string {
  const rel = path.relative(cwd, logsDir);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : logsDir;
}

/** The logs folder of a command that was given no RUN: it must exist (exit 2 naming it, as for every path). */
export async function logsDirProblem(cwd: string, logsDir: string, given: string | undefined): Promise<string | null> {
  const missing = await logsFolderMissing(logsDir, given ?? shownLogsDir(cwd, logsDir));
  return missing?.replace('--param logs=PATH', '--logs-dir PATH') ?? null;
}

/** Turn `turn` (else the last) of a log_* folder, or the turn a turn_N or attempt_M folder is. */
export async function turnOf(folder: string, turn: number | undefined): Promise<TurnUnit | string> {
  if (/^(turn|attempt)_\d+$/.test(path.basename(folder))) {
    const resolved = await resolveTurnUnit(folder);
    if (!resolved.ok) return resolved.reason;
    if (turn !== undefined && resolved.unit.turn !== turn) return `${folder} is turn ${resolved.unit.turn}, not turn ${turn}`;
    return resolved.unit;
  }
  const units = await turnUnitsOfSession(folder);
  if (units.length === 0)
    return `${folder} holds no MassGen run (no turn_N dir, no status.json, metrics, coordination events or snapshots)`;
  if (turn === undefined) return units[units.length - 1] as TurnUnit;
  return units.find((u) => u.turn === turn) ?? `${folder} has no turn ${turn}; turns: ${units.map((u) => u.turn).join(', ')}`;
}
