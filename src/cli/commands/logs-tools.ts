// `refinery logs tools`: the tool calls of one turn per tool (and per agent with --by-agent), as
// `massgen logs tools` shows them: calls, failures, denied, total and mean time.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ToolTableRow } from '../../workflows/massgen/tool-table.ts';
import type { CommandIo } from '../command.ts';

type Fail = (message: string, code?: number) => number;

function render(rows: ToolTableRow[], byAgent: boolean): string {
  const head = [...(byAgent ? ['Agent'] : []), 'Tool', 'Calls', 'Failures', 'Denied', 'Total (s)', 'Mean (s)'];
  const cells = rows.map((r) => [
    ...(byAgent ? [r.agentId ?? '?'] : []),
    r.name,
    String(r.calls),
    String(r.failures),
    String(r.denied),
    r.totalSeconds.toFixed(2),
    r.avgSeconds.toFixed(2),
  ]);
  const numeric = (c: number): boolean => c >= head.length - 5;
  const widths = head.map((h, c) => Math.max(h.length, ...cells.map((r) => (r[c] ?? '').length)));
  const line = (cols: string[]): string =>
    cols
      .map((x, c) => (numeric(c) ? x.padStart(widths[c] ?? 0) : x.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), ...cells.map(line)].join('\n');
}

export async function toolsCommand(argv: string[], io: CommandIo, fail: Fail): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      logs: { type: 'string' },
      'logs-dir': { type: 'string' },
      turn: { type: 'string', short: 't' },
      sort: { type: 'string' },
      'by-agent': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (values.logs !== undefined && values['logs-dir'] !== undefined) return fail('give --logs or --logs-dir, not both');
  const sort = values.sort ?? 'time';
  if (sort !== 'time' && sort !== 'calls') return fail(`--sort must be time or calls, got '${sort}'`);
  const turn = values.turn === undefined ? undefined : Number(values.turn);
  if (turn !== undefined && (!Number.isInteger(turn) || turn < 0)) return fail(`--turn must be a turn number, got '${values.turn}'`);
  if (positionals.length > 1) return fail(`tools takes one RUN, got ${positionals.length}: ${positionals.join(' ')}`);
  const given = values.logs ?? values['logs-dir'];
  const logsDir = path.resolve(io.cwd, given ?? '.massgen/massgen_logs');
  const [{ listSessions }, { runFolder, turnOf, logsDirProblem }, { readTurnUnit }, { toolTable }] = await Promise.all([
    import('../../workflows/massgen/discover.ts'),
    import('./logs-target.ts'),
    import('../../workflows/massgen/analyze.ts'),
    import('../../workflows/massgen/tool-table.ts'),
  ]);
  let folder: string | undefined;
  if (positionals[0] !== undefined) {
    const found = await runFolder(io.cwd, logsDir, positionals[0]);
    if ('error' in found) return fail(found.error);
    folder = found.folder;
  } else {
    const missing = await logsDirProblem(io.cwd, logsDir, given);
    if (missing) return fail(missing);
    folder = (await listSessions(logsDir)).at(-1);
    if (!folder) return fail(`no log_* session in ${logsDir}; pass RUN or --logs D`);
  }
  const unit = await turnOf(folder, turn);
  if (typeof unit === 'string') return fail(unit);
  const { runs } = await readTurnUnit(unit, { lines: { signal: io.signal } });
  const byAgent = values['by-agent'] === true;
  const rows = toolTable(runs, { byAgent, sort });
  const where = `${path.basename(unit.logDir)}${unit.turnDir ? ` turn ${unit.turn}` : ''}`;
  if (values.json) {
    const out = rows.map((r) => (byAgent ? r : { ...r, agentId: undefined }));
    io.stdout.write(`${JSON.stringify({ session: path.basename(unit.logDir), turn: unit.turn, byAgent, sort, tools: out }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write(`${where}: no tool calls recorded\n`);
    return 0;
  }
  const total = (pick: (r: ToolTableRow) => number): number => rows.reduce((s, r) => s + pick(r), 0);
  io.stdout.write(
    `${where}: ${total((r) => r.calls)} tool call(s), ${total((r) => r.failures)} failed, ${total((r) => r.denied)} denied\n${render(rows, byAgent)}\n`,
  );
  return 0;
}
