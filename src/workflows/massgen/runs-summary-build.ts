// From analysis.json files to the summary and its Markdown: shared by the `summarize-runs` task
// and `refinery logs summary`. Files are read through the DigestCache (unchanged ones are not read).
import path from 'node:path';
import type { DigestCache } from './digest-cache.ts';
import { ANALYSIS_FILE, REPORT_FILE } from './list-logs.ts';
import { renderRunsSummary } from './render-runs-summary.ts';
import type { GroupBy, RunsSummary } from './runs-summary-model.ts';
import { summarizeRuns, type DigestEntry } from './runs-summary.ts';

export interface SummaryBuild {
  summary: RunsSummary;
  markdown: string;
  /** analysis.json files that could not be used, with why. */
  problems: { file: string; problem: string }[];
}

export interface BuildOptions {
  /** The logs folder as the user gave it (shown in the summary). */
  logs: string;
  /** Absolute folder the summary is written to; report links are relative to it. */
  reportsRoot: string;
  /** Only analyses of these session folders (log_* names) count; others under a shared reports folder belong to other logs. */
  sessions?: ReadonlySet<string>;
  since?: string | null;
  groupBy?: GroupBy;
  generatedAt?: string;
}

/** The report beside an analysis.json, relative to the summary's folder, '/'-separated. */
export function reportLinkOf(reportsRoot: string, analysisFile: string): string {
  return path
    .relative(reportsRoot, path.join(path.dirname(analysisFile), REPORT_FILE))
    .split(path.sep)
    .join('/');
}

export function buildRunsSummary(files: readonly string[], cache: DigestCache, options: BuildOptions): SummaryBuild {
  const entries: DigestEntry[] = [];
  const problems: SummaryBuild['problems'] = [];
  for (const file of files) {
    if (path.basename(file) !== ANALYSIS_FILE) continue;
    const read = cache.read(file);
    if (!read.ok) {
      problems.push({ file, problem: read.problem });
      continue;
    }
    if (options.sessions && !options.sessions.has(read.digest.session)) continue;
    entries.push({ digest: read.digest, report: reportLinkOf(options.reportsRoot, file) });
  }
  const summary = summarizeRuns(entries, {
    logs: options.logs,
    since: options.since ?? null,
    groupBy: options.groupBy ?? 'model',
    ...(options.generatedAt ? { generatedAt: options.generatedAt } : {}),
  });
  return { summary, markdown: renderRunsSummary(summary), problems };
}
