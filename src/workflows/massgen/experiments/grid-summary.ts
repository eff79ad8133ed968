import type { ExperimentRecord } from './experiment-record.ts';

/** What the grid summary reads of a cell's analysis.json (schemas/turn-analysis.schema.json). */
export interface CellAnalysis {
  winner?: { agentId: string | null };
  overview?: { answers: number; votes: number; totalCostUsd: number | null };
  errors?: { apiErrors: unknown[]; agentErrors: unknown[]; enforcement: unknown[] };
}

export interface GridCell {
  config: string;
  question: string;
  repeat: number;
  ok: boolean;
  winner: string | null;
  answers: number | null;
  votes: number | null;
  duration_s: number;
  cost_usd: number | null;
  errors: string[];
  log_dir: string | null;
  experiment: string;
  analysis: string | null;
}

export interface ConfigTotals {
  config: string;
  cells: number;
  succeeded: number;
  failed: number;
  duration_s: number;
  mean_duration_s: number;
  cost_usd: number;
  answers: number;
  votes: number;
  winners: Record<string, number>;
}

export interface GridSummary {
  schema_version: 1;
  configs: string[];
  questions: string[];
  repeat: number;
  cells: GridCell[];
  missing: Array<{ config: string; question: string; repeat: number }>;
  per_config: ConfigTotals[];
  totals: { cells: number; succeeded: number; failed: number; missing: number; duration_s: number; cost_usd: number };
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

export function gridCell(
  record: ExperimentRecord,
  analysis: CellAnalysis | undefined,
  files: { experiment: string; analysis: string | null },
): GridCell {
  const errors: string[] = [];
  if (!record.ok)
    errors.push(
      record.timed_out ? 'timed out' : record.exit_code !== 0 ? `exit ${record.exit_code ?? record.signal}` : 'no LOG_DIR printed',
    );
  errors.push(...record.agent_errors);
  if (!record.ok) errors.push(...record.stderr_tail.slice(-3));
  const api = analysis?.errors?.apiErrors.length ?? 0;
  if (api > 0) errors.push(`${api} API error${api === 1 ? '' : 's'} (analysis)`);
  return {
    config: record.config,
    question: record.question,
    repeat: record.repeat,
    ok: record.ok,
    winner: record.winner ?? analysis?.winner?.agentId ?? null,
    answers: analysis?.overview?.answers ?? null,
    votes: analysis?.overview?.votes ?? null,
    duration_s: round(record.duration_ms / 1000),
    cost_usd: analysis?.overview?.totalCostUsd ?? null,
    errors,
    log_dir: record.log_dir,
    experiment: files.experiment,
    analysis: files.analysis,
  };
}

export function gridSummary(grid: { configs: string[]; questions: string[]; repeat: number }, cells: GridCell[]): GridSummary {
  const key = (c: { config: string; question: string; repeat: number }) => JSON.stringify([c.config, c.question, c.repeat]);
  const have = new Set(cells.map(key));
  const missing: GridSummary['missing'] = [];
  for (const config of grid.configs)
    for (const question of grid.questions)
      for (let repeat = 1; repeat <= grid.repeat; repeat += 1)
        if (!have.has(key({ config, question, repeat }))) missing.push({ config, question, repeat });
  const per_config = grid.configs.map((config): ConfigTotals => {
    const mine = cells.filter((c) => c.config === config);
    const duration = mine.reduce((s, c) => s + c.duration_s, 0);
    const winners: Record<string, number> = {};
    for (const c of mine) if (c.winner) winners[c.winner] = (winners[c.winner] ?? 0) + 1;
    return {
      config,
      cells: mine.length,
      succeeded: mine.filter((c) => c.ok).length,
      failed: mine.filter((c) => !c.ok).length,
      duration_s: round(duration),
      mean_duration_s: mine.length ? round(duration / mine.length) : 0,
      cost_usd: round(
        mine.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
        6,
      ),
      answers: mine.reduce((s, c) => s + (c.answers ?? 0), 0),
      votes: mine.reduce((s, c) => s + (c.votes ?? 0), 0),
      winners,
    };
  });
  return {
    schema_version: 1,
    configs: grid.configs,
    questions: grid.questions,
    repeat: grid.repeat,
    cells,
    missing,
    per_config,
    totals: {
      cells: cells.length,
      succeeded: cells.filter((c) => c.ok).length,
      failed: cells.filter((c) => !c.ok).length,
      missing: missing.length,
      duration_s: round(cells.reduce((s, c) => s + c.duration_s, 0)),
      cost_usd: round(
        cells.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
        6,
      ),
    },
  };
}
