// Where the analyses and reports of a logs folder live. One rule for the analyze pipeline
// (pipelines/analyze.yaml spells it as expressions) and the `refinery logs` commands:
//   - `reports` given: <reports>/<log_*>/<turn_N>/ (a copy of the log tree's shape);
//   - logs given inside the project (a relative path that does not start with ..): beside each turn;
//   - logs given as an absolute path or a path starting with ..: <project>/.refinery/massgen/<log_*>/<turn_N>/.
// Log folders are never written to unless they are the project's own or the user names them.
import path from 'node:path';
import type { TurnUnit } from './model.ts';

/** Reports of logs that live outside the project, relative to the project root. */
export const OUTSIDE_REPORTS_DIR = '.refinery/massgen';
/** The analyze pipeline's summary stage writes these; nothing else does (one writer per artifact). */
export const SUMMARY_JSON = 'runs-summary.json';
export const SUMMARY_MARKDOWN = 'RUNS_SUMMARY.md';
/**
 * `refinery logs summary` writes its own copy under these names: were it to write the stage's files, each
 * would find the other's output modified and the summary stage would run again after every command.
 */
export const LOGS_SUMMARY_JSON = 'logs-summary.json';
export const LOGS_SUMMARY_MARKDOWN = 'LOGS_SUMMARY.md';

/** As the pipeline decides: an absolute path, or one that starts by leaving the project. */
export function isOutsideProject(logsArg: string): boolean {
  const normalized = path.posix.normalize(logsArg.replaceAll(path.sep, '/'));
  return path.isAbsolute(logsArg) || normalized === '..' || normalized.startsWith('../');
}

export interface ReportLocation {
  /** The logs folder (absolute). */
  logsDir: string;
  /** Where the summary goes and the per-turn folders are mirrored (absolute). */
  reportsRoot: string;
  /** True when the reports sit beside the turns (reportsRoot is the logs folder). */
  beside: boolean;
}

export function reportLocation(projectRoot: string, logsArg: string, reportsArg?: string): ReportLocation {
  const logsDir = path.resolve(projectRoot, logsArg);
  if (reportsArg !== undefined && reportsArg !== '') {
    const reportsRoot = path.resolve(projectRoot, reportsArg);
    return { logsDir, reportsRoot, beside: reportsRoot === logsDir };
  }
  if (isOutsideProject(logsArg)) return { logsDir, reportsRoot: path.join(projectRoot, OUTSIDE_REPORTS_DIR), beside: false };
  return { logsDir, reportsRoot: logsDir, beside: true };
}

/** The folder that holds a unit's analysis.json and ANALYSIS_REPORT.md. */
export function reportDirIn(location: ReportLocation, unit: Pick<TurnUnit, 'logDir' | 'turnDir'>): string {
  if (location.beside) return unit.turnDir ?? unit.logDir;
  const session = path.join(location.reportsRoot, path.basename(unit.logDir));
  return unit.turnDir ? path.join(session, path.basename(unit.turnDir)) : session;
}
