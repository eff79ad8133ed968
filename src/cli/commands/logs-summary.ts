// `refinery logs summary`: analyzes the turns that have no current analysis, then adds every
// analysis.json up into logs-summary.json and LOGS_SUMMARY.md (beside the log_* folders, or under
// .refinery/massgen/ for logs outside the project) and prints the main figures.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
import { DEFAULT_STALE_AFTER_SECONDS } from '../../workflows/massgen/analysis-state.ts';
import { DigestCache } from '../../workflows/massgen/digest-cache.ts';
import { logsProblem } from '../../workflows/massgen/logs-folder.ts';
import { refreshAnalyses } from '../../workflows/massgen/refresh-analyses.ts';
import { duration } from '../../workflows/massgen/render-runs-summary.ts';
import { LOGS_SUMMARY_JSON, LOGS_SUMMARY_MARKDOWN, reportLocation } from '../../workflows/massgen/report-location.ts';
import { buildRunsSummary } from '../../workflows/massgen/runs-summary-build.ts';
import { GROUP_BYS, type GroupBy, type RunsSummary } from '../../workflows/massgen/runs-summary-model.ts';
import { scanLogs } from '../../workflows/massgen/scan-logs.ts';
import { writeFilesAtomically } from '../../workflows/massgen/write-files.ts';
import type { CommandIo } from '../command.ts';

const rel = (cwd: string, p: string): string => {
  const r = path.relative(cwd, p);
  return r.startsWith('..') ? p : r || '.';
};

function text(s: RunsSummary, cwd: string, files: string[]): string {
  const t = s.totals;
  const money = (n: number | null): string => (n === null ? '-' : `$${n.toFixed(2)}`);
  const lines = [
    `${t.turns} runs in ${t.sessions} log folders${s.filter.since ? ` since ${s.filter.since}` : ''}: ${money(t.costUsd)}, wall clock ${duration(t.wallClockSeconds)} (median ${duration(s.duration.p50Seconds)})`,
    `answers ${t.answers}, votes ${t.votes} (unanimous in ${t.unanimousTurns} of ${t.votedTurns} voted runs), re-votes ${t.reVotes}, restarts ${t.restarts}`,
    `enforcement retries ${t.enforcementRetries}${
      s.enforcement.byReason.length
        ? ` (${s.enforcement.byReason
            .slice(0, 4)
            .map((r) => `${r.reason} ${r.retries}`)
            .join(', ')})`
        : ''
    }, API errors ${t.apiErrors}, lost buffer characters ${t.bufferCharsLost}`,
  ];
  const denied = s.deniedToolCalls?.byAgentTool ?? [];
  if (denied.length > 0)
    lines.push(
      `denied tool calls ${t.deniedToolCalls}: ${denied
        .slice(0, 6)
        .map((r) => `${r.agent} ${r.tool} ${r.denied}`)
        .join(', ')}`,
    );
  if (s.perDay.length > 0) {
    lines.push('', 'Date        Runs  Cost');
    for (const d of s.perDay.slice(-7)) lines.push(`${d.date.padEnd(10)}  ${String(d.turns).padStart(4)}  ${money(d.costUsd)}`);
  }
  if (s.groups.rows.length > 0) {
    lines.push('', `By ${s.groups.by}: runs, wins, enforcement retries, agent cost`);
    for (const g of s.groups.rows.slice(0, 10))
      lines.push(`  ${g.key}: ${g.turns} runs, ${g.wins} wins, ${g.enforcementRetries} retries, ${money(g.costUsd)}`);
  }
  for (const story of s.sessions)
    lines.push(`session ${story.id}: ${story.links.map((l) => `${l.folder} continues ${l.continues}`).join('; ')}`);
  lines.push('', ...files.map((f) => `wrote ${rel(cwd, f)}`));
  return `${lines.join('\n')}\n`;
}

export async function summaryCommand(argv: string[], io: CommandIo, fail: (message: string, code?: number) => number): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'logs-dir': { type: 'string' },
      reports: { type: 'string' },
      since: { type: 'string' },
      'group-by': { type: 'string' },
      json: { type: 'boolean' },
      'no-analyze': { type: 'boolean' },
      'stale-after': { type: 'string' },
    },
  });
  const since = values.since ?? null;
  if (since !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(since) || Number.isNaN(Date.parse(since))))
    return fail(`--since must be a date YYYY-MM-DD, got '${since}'`);
  const groupBy = (values['group-by'] ?? 'model') as GroupBy;
  if (!GROUP_BYS.includes(groupBy)) return fail(`--group-by must be one of ${GROUP_BYS.join(', ')}, got '${values['group-by']}'`);
  const stale = values['stale-after'] === undefined ? DEFAULT_STALE_AFTER_SECONDS : Number(values['stale-after']);
  if (!Number.isFinite(stale) || stale < 0) return fail(`--stale-after must be a number of seconds, got '${values['stale-after']}'`);
  const logsArg = values['logs-dir'] ?? '.massgen/massgen_logs';
  const location = reportLocation(io.cwd, logsArg, values.reports);
  const problem = await logsProblem(location.logsDir, logsArg);
  if (problem) return fail(problem.replace('--param logs=PATH', '--logs-dir PATH'));

  const registry = new SchemaRegistry(io.cwd);
  const cache = new DigestCache(path.join(io.cwd, '.refinery', 'cache', 'massgen-summary', 'digests.json'));
  const turns = scanLogs(location.logsDir, { besideReports: location.beside });
  const refreshed = await refreshAnalyses(turns, {
    location,
    cache,
    staleAfterSeconds: stale,
    signal: io.signal,
    analyze: !values['no-analyze'],
    validate: (analysis) => {
      const check = registry.validate('turn-analysis', analysis);
      return check.ok
        ? null
        : check.issues
            .slice(0, 3)
            .map((i) => `${i.pointer || '/'} ${i.message}`)
            .join('; ');
    },
  });
  if (io.signal.aborted) return 130;
  const built = buildRunsSummary(refreshed.files, cache, {
    logs: logsArg,
    reportsRoot: location.reportsRoot,
    sessions: new Set(turns.map((t) => t.session)),
    since,
    groupBy,
  });
  cache.save();
  const check = registry.validate('runs-summary', built.summary);
  if (!check.ok) {
    const issues = check.issues
      .slice(0, 10)
      .map((i) => `  ${i.pointer || '/'} ${i.message}`)
      .join('\n');
    return fail(`the summary does not match schemas/runs-summary.schema.json; nothing was written (a bug):\n${issues}`, 1);
  }
  await writeFilesAtomically(location.reportsRoot, [
    [LOGS_SUMMARY_JSON, `${JSON.stringify(built.summary, null, 2)}\n`],
    [LOGS_SUMMARY_MARKDOWN, `${built.markdown}\n`],
  ]);
  for (const m of refreshed.missing) io.stderr.write(`refinery logs: ${m.session} turn ${m.turn} left out: ${m.problem}\n`);
  for (const p of built.problems) io.stderr.write(`refinery logs: ${rel(io.cwd, p.file)} left out: ${p.problem}\n`);
  const reads = cache.stats;
  io.stderr.write(
    `analyzed ${refreshed.analyzed.length} turn(s), ${refreshed.upToDate} up to date; analysis files: ${reads.parsed} read, ${reads.hashed} unchanged by content, ${reads.cached} unchanged by stat\n`,
  );
  if (values.json) io.stdout.write(`${JSON.stringify(built.summary, null, 2)}\n`);
  else
    io.stdout.write(
      text(built.summary, io.cwd, [
        path.join(location.reportsRoot, LOGS_SUMMARY_MARKDOWN),
        path.join(location.reportsRoot, LOGS_SUMMARY_JSON),
      ]),
    );
  return 0;
}
