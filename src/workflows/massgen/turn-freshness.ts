// Is a turn's analysis up to date with its log files? Synchronous: a listing over a thousand runs
// stats tens of thousands of files, and one thread-pool hop per stat would dominate.
import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type { TurnUnit } from './model.ts';

export const REPORT_FILE = 'ANALYSIS_REPORT.md';
export const ANALYSIS_FILE = 'analysis.json';
const MAX_DEPTH = 4;

function isOwnOutput(name: string): boolean {
  return name === REPORT_FILE || name === ANALYSIS_FILE || name.startsWith(`.${REPORT_FILE}`) || name.startsWith(`.${ANALYSIS_FILE}`);
}

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * Newest mtime of the files of a turn (bounded depth, symlinks and workspace/ copies not
 * entered), leaving out the analysis outputs at its top; for a legacy root, not its turn_* dirs.
 */
export function newestTurnFileMs(dir: string, skipTurnDirs: boolean, depth = 0): number {
  let newest = 0;
  for (const e of entries(dir)) {
    if (depth === 0 && isOwnOutput(e.name)) continue;
    const full = path.join(dir, e.name);
    if (e.isFile()) {
      try {
        newest = Math.max(newest, lstatSync(full).mtimeMs);
      } catch {
        // Gone since the listing: nothing to compare.
      }
    } else if (
      e.isDirectory() &&
      depth < MAX_DEPTH &&
      e.name !== 'workspace' &&
      !(skipTurnDirs && depth === 0 && /^turn_\d+$/.test(e.name))
    ) {
      newest = Math.max(newest, newestTurnFileMs(full, skipTurnDirs, depth + 1));
    }
  }
  return newest;
}

/** mtime of a non-empty regular file, or null. */
export function nonEmptyFileMtime(file: string): number | null {
  try {
    const st = lstatSync(file);
    return st.isFile() && st.size > 0 ? st.mtimeMs : null;
  } catch {
    return null;
  }
}

/** Both outputs are there, non-empty, and not older than any file of the turn. */
export function isAnalysisFresh(unit: TurnUnit, reportDir: string): boolean {
  const report = nonEmptyFileMtime(path.join(reportDir, REPORT_FILE));
  const analysis = nonEmptyFileMtime(path.join(reportDir, ANALYSIS_FILE));
  if (report === null || analysis === null) return false;
  return Math.min(report, analysis) >= newestTurnFileMs(unit.turnDir ?? unit.logDir, unit.turnDir === null);
}
