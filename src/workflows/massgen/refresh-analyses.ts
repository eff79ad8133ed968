// Brings every turn's analysis up to date before a summary: a turn is analyzed again when it has
// no analysis.json and ANALYSIS_REPORT.md, when its turn or attempt folders changed after them, or
// when the last analysis said the run was still in progress. Files MassGen rewrites while a run
// lives move those folders' mtimes (scan-logs.ts); a file edited in place in a finished run is not
// looked for here (`refinery run analyze` hashes every file).
import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { DigestCache } from './digest-cache.ts';
import { reportDirIn, type ReportLocation } from './report-location.ts';
import type { ScannedTurn } from './scan-logs.ts';
import { ANALYSIS_FILE, REPORT_FILE } from './turn-freshness.ts';
import type { TurnAnalysis } from './analysis-model.ts';
import { writeFilesAtomically } from './write-files.ts';

export interface RefreshOptions {
  location: ReportLocation;
  cache: DigestCache;
  staleAfterSeconds: number;
  /** Schema problems of an analysis, or null when it is valid (nothing is written otherwise). */
  validate(analysis: TurnAnalysis): string | null;
  /** False: summarize what is there, analyze nothing. */
  analyze?: boolean;
  signal?: AbortSignal;
  concurrency?: number;
}

export interface RefreshResult {
  /** Every turn's analysis.json (existing or just written), absolute. */
  files: string[];
  analyzed: { session: string; turn: number; state: string }[];
  upToDate: number;
  /** Turns without a usable analysis (analysis refused, or analyze: false and none there). */
  missing: { session: string; turn: number; problem: string }[];
}

function statOf(file: string): Stats | null {
  try {
    const st = statSync(file);
    return st.isFile() && st.size > 0 ? st : null;
  } catch {
    return null;
  }
}

const mtimeOf = (file: string): number | null => statOf(file)?.mtimeMs ?? null;

function reportDirOfScanned(location: ReportLocation, t: ScannedTurn): string {
  return reportDirIn(location, { logDir: t.sessionDir, turnDir: t.turnDir });
}

function isFresh(t: ScannedTurn, dir: string, cache: DigestCache): boolean {
  const analysis = statOf(path.join(dir, ANALYSIS_FILE));
  const report = mtimeOf(path.join(dir, REPORT_FILE));
  if (analysis === null || report === null || Math.min(analysis.mtimeMs, report) < t.folderMtimeMs) return false;
  const read = cache.read(path.join(dir, ANALYSIS_FILE), analysis);
  return read.ok && read.digest.state !== 'in_progress' && read.digest.attempts === t.runDirs.length;
}

async function analyzeOne(t: ScannedTurn, dir: string, options: RefreshOptions): Promise<{ state: string } | { problem: string }> {
  // Loaded only when a turn needs it: a summary with nothing new reads no log file.
  const [{ analyzeTurnUnit }, { resolveTurnUnit }] = await Promise.all([import('./analyze.ts'), import('./discover.ts')]);
  const resolved = await resolveTurnUnit(t.turnDir ?? t.sessionDir);
  if (!resolved.ok) return { problem: resolved.reason };
  const { analysis, report } = await analyzeTurnUnit(resolved.unit, {
    staleAfterSeconds: options.staleAfterSeconds,
    lines: { signal: options.signal },
  });
  const invalid = options.validate(analysis);
  if (invalid) return { problem: `the analysis does not match schemas/turn-analysis.schema.json (${invalid}); nothing was written` };
  await writeFilesAtomically(dir, [
    [ANALYSIS_FILE, `${JSON.stringify(analysis, null, 2)}\n`],
    [REPORT_FILE, report],
  ]);
  options.cache.forget(path.join(dir, ANALYSIS_FILE));
  return { state: analysis.state.value };
}

export async function refreshAnalyses(turns: readonly ScannedTurn[], options: RefreshOptions): Promise<RefreshResult> {
  const result: RefreshResult = { files: [], analyzed: [], upToDate: 0, missing: [] };
  const stale: { t: ScannedTurn; dir: string }[] = [];
  for (const t of turns) {
    const dir = reportDirOfScanned(options.location, t);
    if (isFresh(t, dir, options.cache)) {
      result.upToDate += 1;
      result.files.push(path.join(dir, ANALYSIS_FILE));
    } else if (options.analyze === false) {
      if (mtimeOf(path.join(dir, ANALYSIS_FILE)) !== null) result.files.push(path.join(dir, ANALYSIS_FILE));
      else result.missing.push({ session: t.session, turn: t.turn, problem: 'not analyzed yet' });
    } else stale.push({ t, dir });
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < stale.length && !options.signal?.aborted) {
      const { t, dir } = stale[next++] as { t: ScannedTurn; dir: string };
      const done = await analyzeOne(t, dir, options);
      if ('problem' in done) result.missing.push({ session: t.session, turn: t.turn, problem: done.problem });
      else {
        result.analyzed.push({ session: t.session, turn: t.turn, state: done.state });
        result.files.push(path.join(dir, ANALYSIS_FILE));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 2) }, worker));
  result.files.sort();
  return result;
}
