// `refinery logs list|analyze|summary|bundle`: MassGen logs without a pipeline. Each subcommand
// loads its own modules when it runs.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_STALE_AFTER_SECONDS } from '../../workflows/massgen/analysis-state.ts';
import type { SessionRow } from '../../workflows/massgen/list-logs.ts';
import { reportDirIn, reportLocation } from '../../workflows/massgen/report-location.ts';
import { ANALYSIS_FILE, REPORT_FILE } from '../../workflows/massgen/turn-freshness.ts';
import { writeFilesAtomically } from '../../workflows/massgen/write-files.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';
import type { Command, CommandIo } from '../command.ts';
import { LOGS_USAGE as USAGE } from './logs-usage.ts';

function fail(io: CommandIo, message: string, code = 2): number {
  io.stderr.write(`refinery logs: ${message}\n`);
  return code;
}

function duration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m}m ${Math.round(seconds % 60)}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

function formatRows(rows: SessionRow[], title: string): string {
  const question = (q: string | null): string => (q === null ? 'No metrics' : q.length > 35 ? `${q.slice(0, 32)}...` : q);
  // Only when some folder continues another (massgen --session-id): which one, as turn N of that session.
  const linked = rows.some((r) => r.continues !== null);
  const table = rows.map((r, i) => [
    String(i + 1),
    r.timestamp,
    duration(r.wallClockSeconds),
    r.costUsd === null ? '-' : `$${r.costUsd.toFixed(2)}`,
    r.turns === 0 ? '-' : r.analyzedTurns === r.turns ? 'yes' : r.analyzedTurns === 0 ? 'no' : `${r.analyzedTurns}/${r.turns}`,
    question(r.question).replace(/\s+/g, ' '),
    ...(linked ? [r.continues ? `${r.continues} (${r.massgenSession})` : ''] : []),
  ]);
  const head = ['#', 'Timestamp', 'Duration', 'Cost', 'Analyzed', 'Question', ...(linked ? ['Continues'] : [])];
  const widths = head.map((h, c) => Math.max(h.length, ...table.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((x, c) => x.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd();
  return [title, line(head), ...table.map(line)].join('\n');
}

async function list(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'logs-dir': { type: 'string' },
      reports: { type: 'string' },
      analyzed: { type: 'boolean' },
      unanalyzed: { type: 'boolean' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (values.analyzed && values.unanalyzed) return fail(io, '--analyzed and --unanalyzed exclude each other');
  const limit = values.limit === undefined ? 10 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) return fail(io, `--limit must be a positive integer, got '${values.limit}'`);
  const location = reportLocation(io.cwd, values['logs-dir'] ?? '.massgen/massgen_logs', values.reports);
  const logsDir = location.logsDir;
  const { logsDirProblem } = await import('./logs-target.ts');
  const missing = await logsDirProblem(io.cwd, logsDir, values['logs-dir']);
  if (missing) return fail(io, missing);
  const filter = values.analyzed ? 'analyzed' : values.unanalyzed ? 'unanalyzed' : undefined;
  const [{ DigestCache }, { listLogRows }] = await Promise.all([
    import('../../workflows/massgen/digest-cache.ts'),
    import('../../workflows/massgen/list-logs.ts'),
  ]);
  // Read only: the summary's digests give a current analysis's figures without opening it.
  const cache = new DigestCache(path.join(io.cwd, '.refinery', 'cache', 'massgen-summary', 'digests.json'));
  const rows = await listLogRows(logsDir, { filter, limit, location, cache });
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify(
        rows.map((r) => ({ ...r, dir: path.relative(io.cwd, r.dir) || '.' })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write(`No ${filter ?? ''} MassGen logs found in ${logsDir}\n`.replace('  ', ' '));
    return 0;
  }
  const title = filter === 'analyzed' ? 'Analyzed Runs' : filter === 'unanalyzed' ? 'Unanalyzed Runs' : 'Recent Runs';
  io.stdout.write(`${formatRows(rows, title)}\n`);
  return 0;
}

/** RUN or --log-dir (one of them at most), else the newest session; then its turn. */
async function pickUnit(
  io: CommandIo,
  logsDir: string,
  run: string | undefined,
  logDir: string | undefined,
  turn: number | undefined,
  logsDirArg: string | undefined,
): Promise<TurnUnit | string> {
  if (run !== undefined && logDir !== undefined) return `give RUN or --log-dir, not both`;
  const [{ listSessions }, { runFolder, turnOf, logsDirProblem }] = await Promise.all([
    import('../../workflows/massgen/discover.ts'),
    import('./logs-target.ts'),
  ]);
  let folder = logDir ? path.resolve(io.cwd, logDir) : undefined;
  if (run !== undefined || logDir !== undefined) {
    const found = await runFolder(io.cwd, logsDir, run ?? path.resolve(io.cwd, logDir as string));
    if ('error' in found) return found.error;
    folder = found.folder;
  }
  if (folder === undefined) {
    const missing = await logsDirProblem(io.cwd, logsDir, logsDirArg);
    if (missing) return missing;
  }
  folder ??= (await listSessions(logsDir)).at(-1);
  if (!folder) return `no log_* session in ${logsDir}; pass RUN, --log-dir PATH or --logs-dir D`;
  return turnOf(folder, turn);
}

async function analyze(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'logs-dir': { type: 'string' },
      'log-dir': { type: 'string' },
      reports: { type: 'string' },
      turn: { type: 'string', short: 't' },
      'stale-after': { type: 'string' },
      mode: { type: 'string' },
      force: { type: 'boolean' },
      backends: { type: 'string' },
      config: { type: 'string' },
      'budget-usd': { type: 'string' },
    },
  });
  const mode = values.mode ?? 'deterministic';
  if (mode !== 'deterministic' && mode !== 'self') return fail(io, `--mode is deterministic or self, got '${values.mode}'`);
  const selfOnly = (['force', 'backends', 'config', 'budget-usd'] as const).filter((k) => values[k] !== undefined);
  if (mode !== 'self' && selfOnly.length > 0) return fail(io, `--${selfOnly[0]} belongs to --mode self`);
  const turn = values.turn === undefined ? undefined : Number(values.turn);
  if (turn !== undefined && (!Number.isInteger(turn) || turn < 0)) return fail(io, `--turn must be a turn number, got '${values.turn}'`);
  const stale = values['stale-after'] === undefined ? DEFAULT_STALE_AFTER_SECONDS : Number(values['stale-after']);
  if (!Number.isFinite(stale) || stale < 0) return fail(io, `--stale-after must be a number of seconds, got '${values['stale-after']}'`);
  const logsDir = path.resolve(io.cwd, values['logs-dir'] ?? '.massgen/massgen_logs');
  if (positionals.length > 1) return fail(io, `analyze takes one RUN, got ${positionals.length}: ${positionals.join(' ')}`);
  const unit = await pickUnit(io, logsDir, positionals[0], values['log-dir'], turn, values['logs-dir']);
  // What the user named is not there or holds no run: their input, like every other missing path.
  if (typeof unit === 'string') return fail(io, unit);
  if (mode === 'self') {
    const location = reportLocation(io.cwd, values['log-dir'] ?? values['logs-dir'] ?? '.massgen/massgen_logs', values.reports);
    const options = {
      force: values.force ?? false,
      backends: values.backends,
      config: values.config ?? 'refinery.config.yaml',
      budgetUsd: values['budget-usd'],
    };
    const { selfAnalyze } = await import('./logs-self.ts');
    return selfAnalyze(io, unit, reportDirIn(location, unit), options, (message, code) => fail(io, message, code), stale);
  }
  const [{ analyzeTurnUnit }, { SchemaRegistry }] = await Promise.all([
    import('../../workflows/massgen/analyze.ts'),
    import('../../engine/artifacts/schema-registry.ts'),
  ]);
  const { analysis, report } = await analyzeTurnUnit(unit, { staleAfterSeconds: stale, lines: { signal: io.signal } });
  const check = new SchemaRegistry(io.cwd).validate('turn-analysis', analysis);
  if (!check.ok) {
    const issues = check.issues
      .slice(0, 10)
      .map((i) => `  ${i.pointer || '/'} ${i.message}`)
      .join('\n');
    return fail(io, `the analysis does not match schemas/turn-analysis.schema.json; nothing was written:\n${issues}`, 1);
  }
  // Logs named by an absolute path or one leaving the project get their reports in the project (report-location.ts).
  const location = reportLocation(io.cwd, values['log-dir'] ?? values['logs-dir'] ?? '.massgen/massgen_logs', values.reports);
  const dir = reportDirIn(location, unit);
  await writeFilesAtomically(dir, [
    [ANALYSIS_FILE, `${JSON.stringify(analysis, null, 2)}\n`],
    [REPORT_FILE, report],
  ]);
  const rel = (p: string): string => {
    const r = path.relative(io.cwd, p);
    return r.startsWith('..') ? p : r || '.';
  };
  io.stdout.write(
    `${analysis.source.session} ${analysis.source.turnDir ?? '(legacy flat log)'}: ${analysis.state.value}, winner ${analysis.winner.agentId ?? 'none'}, ${analysis.overview.answers} answer(s), ${analysis.overview.votes} vote(s), ${analysis.warnings.length} warning(s)\n`,
  );
  io.stdout.write(`wrote ${rel(path.join(dir, REPORT_FILE))}\nwrote ${rel(path.join(dir, ANALYSIS_FILE))}\n`);
  return 0;
}

export const logsCommand: Command = {
  name: 'logs',
  summary: 'List, analyze, summarize, count tools of and bundle MassGen log directories',
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    try {
      if (sub === 'list') return await list(rest, io);
      if (sub === 'analyze') return await analyze(rest, io);
      if (sub === 'summary')
        return await (await import('./logs-summary.ts')).summaryCommand(rest, io, (message, code) => fail(io, message, code));
      if (sub === 'tools')
        return await (await import('./logs-tools.ts')).toolsCommand(rest, io, (message, code) => fail(io, message, code));
      if (sub === 'bundle')
        return await (await import('./logs-bundle.ts')).bundleCommand(rest, io, (message, code) => fail(io, message, code));
    } catch (error) {
      const e = error as Error & { code?: string };
      if (e.code?.startsWith('ERR_PARSE_ARGS')) return fail(io, `${e.message}\n${USAGE}`);
      throw error;
    }
    return fail(io, sub === undefined ? `missing subcommand\n${USAGE}` : `unknown subcommand '${sub}'\n${USAGE}`);
  },
};
