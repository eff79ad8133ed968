// Is this a MassGen logs folder? Checked before anything runs, so a typo or a wrong folder is an
// error naming the path, never a green run that found nothing.
import path from 'node:path';
import { listSessions, turnUnitsOfSession } from './discover.ts';
import { lstatSafe } from './fs-safe.ts';

const LOGS_FIX = 'pass the folder that holds the log_* folders (MassGen writes .massgen/massgen_logs), e.g. --param logs=PATH';

/**
 * Why the logs folder `dir` (as the user wrote it: `given`) is not there at all, or null: the one
 * rule every `refinery logs` command and the analyze pipeline apply to a missing path.
 */
export async function logsFolderMissing(dir: string, given: string): Promise<string | null> {
  const shown = given === dir ? dir : `${given} (${dir})`;
  const info = await lstatSafe(dir);
  if (!info) return `MassGen logs folder ${shown} does not exist; ${LOGS_FIX}`;
  if (info.kind !== 'dir') return `MassGen logs folder ${shown} is not a folder; ${LOGS_FIX}`;
  return null;
}

/** Why `dir` (as the user wrote it: `given`) is not a logs folder holding a MassGen run, or null when it is. */
export async function logsProblem(dir: string, given: string): Promise<string | null> {
  const shown = given === dir ? dir : `${given} (${dir})`;
  const fix = LOGS_FIX;
  const missing = await logsFolderMissing(dir, given);
  if (missing) return missing;
  const sessions = await listSessions(dir);
  for (const session of sessions) if ((await turnUnitsOfSession(session)).length > 0) return null;
  const base = path.basename(dir);
  if (/^log_/.test(base) || /^(turn|attempt)_\d+$/.test(base)) {
    return `MassGen logs folder ${shown} is one run's folder, not the folder holding them; pass its parent folder${/^log_/.test(base) ? ` (${path.dirname(dir)})` : ''}`;
  }
  const found =
    sessions.length === 0
      ? 'no log_* folder'
      : `${sessions.length} log_* folder(s) but no MassGen run in them (no turn_N, status.json, metrics, coordination events or snapshots)`;
  return `MassGen logs folder ${shown} holds ${found}; ${fix}`;
}

/** The names of the log_* folders directly in a logs folder. */
export async function sessionNames(dir: string): Promise<Set<string>> {
  return new Set((await listSessions(dir)).map((s) => path.basename(s)));
}
