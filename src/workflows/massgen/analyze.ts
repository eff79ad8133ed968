// Entry point used by the analyze-turn task, `refinery logs analyze` and the benchmark:
// read every attempt of a turn unit, build the analysis, render the report. Never throws on bad logs.
import path from 'node:path';
import type { TurnAnalysis } from './analysis-model.ts';
import { DEFAULT_STALE_AFTER_SECONDS } from './analysis-state.ts';
import { buildTurnAnalysis } from './build-analysis.ts';
import type { LogWarning, RunData, TurnUnit } from './model.ts';
import { listDir, lstatSafe } from './fs-safe.ts';
import { readRun } from './read-run.ts';
import { subtractPreviousTurn } from './cumulative.ts';
import { resolveTurnUnit } from './discover.ts';
import type { LineOptions } from './read-lines.ts';
import { renderReport } from './render-report.ts';

export interface AnalyzeOptions {
  /** Epoch ms used as "now" for the in-progress rule (default Date.now()). */
  nowMs?: number;
  staleAfterSeconds?: number;
  lines?: LineOptions;
  /** End-of-run JSON files larger than this are skipped with a warning (default JSON_FILE_CAP). */
  maxJsonBytes?: number;
}

export interface AnalyzeResult {
  analysis: TurnAnalysis;
  report: string;
}

/** Reads every attempt of a unit; warnings carry paths relative to the report dir. */
export async function readTurnUnit(unit: TurnUnit, options: AnalyzeOptions = {}): Promise<{ runs: RunData[]; warnings: LogWarning[] }> {
  const warnings: LogWarning[] = [];
  const seen = new Set<string>();
  const warn = (file: string, code: string, message: string): void => {
    const key = `${file}|${code}|${message}`;
    if (!seen.has(key) && warnings.length < 500) {
      seen.add(key);
      warnings.push({ file, code, message });
    }
  };
  const baseDir = unit.turnDir ?? unit.logDir;
  const runs: RunData[] = [];
  const limits = options.maxJsonBytes === undefined ? {} : { maxJsonBytes: options.maxJsonBytes };
  for (const attempt of unit.attempts) runs.push(await readRun(attempt, warn, { baseDir, lines: options.lines, ...limits }));
  await adoptTurnFinal(unit, runs);
  const previous = await previousTurnRun(unit, limits);
  if (previous && runs[0]) runs[0] = subtractPreviousTurn(runs[0], previous, warn, path.relative(baseDir, runs[0].dir) || '.');
  for (const run of runs) {
    const rel = path.relative(baseDir, run.dir) || '.';
    if (run.files.length === 0) warn(rel, 'empty-run', 'the run directory holds no files yet');
    if (!run.status && !run.coordination && !run.metrics)
      warn(
        rel,
        'missing',
        'no status.json, coordination_events.json or metrics_summary.json: figures come from snapshots, events and logs only',
      );
  }
  return { runs, warnings };
}

/**
 * `turn_N/final/<winner>/` is the CLI's copy of the last attempt's `final/`, made after the turn
 * (massgen/cli.py). Its agents count as the last attempt's finals: the turn ended, and with whom,
 * even where the attempt's own copy is missing.
 */
async function adoptTurnFinal(unit: TurnUnit, runs: RunData[]): Promise<void> {
  const last = runs[runs.length - 1];
  if (!unit.turnDir || !last || path.resolve(last.dir) === path.resolve(unit.turnDir)) return;
  const agents = (await listDir(path.join(unit.turnDir, 'final'))).filter((e) => e.kind === 'dir').map((e) => e.name);
  if (agents.length > 0) last.finalAgents = [...new Set([...last.finalAgents, ...agents])].sort();
}

/** The last attempt of turn_{N-1} of the same session, read without its streamed logs. */
async function previousTurnRun(unit: TurnUnit, limits: { maxJsonBytes?: number }): Promise<RunData | null> {
  if (!unit.turnDir || unit.turn < 2) return null;
  const prevDir = path.join(unit.logDir, `turn_${unit.turn - 1}`);
  const resolved = await resolveTurnUnit(prevDir);
  const last = resolved.ok ? resolved.unit.attempts.at(-1) : undefined;
  if (!last) return null;
  return readRun(last, () => {}, { baseDir: prevDir, skipStreams: true, subagents: false, ...limits });
}

export async function analyzeTurnUnit(unit: TurnUnit, options: AnalyzeOptions = {}): Promise<AnalyzeResult> {
  const { runs, warnings } = await readTurnUnit(unit, options);
  const next = unit.turnDir ? await lstatSafe(path.join(unit.logDir, `turn_${unit.turn + 1}`)) : null;
  const analysis = buildTurnAnalysis({
    unit,
    runs,
    warnings,
    nextTurnExists: next?.kind === 'dir',
    nowMs: options.nowMs ?? Date.now(),
    staleAfterSeconds: options.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS,
  });
  return { analysis, report: renderReport(analysis) };
}
