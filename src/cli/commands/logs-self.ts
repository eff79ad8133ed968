// `refinery logs analyze --mode self`: the deterministic analysis, then three model analysts over it
// (src/workflows/massgen/self-analysis/). Exit 0: every analyst answered; 1: partial (an analyst failed,
// the report is written); 2: bad input or a backend that cannot be called (before any call).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
import { Budget } from '../../workflows/backends/budget.ts';
import { loadBackendsConfig } from '../../workflows/backends/config-file.ts';
import { BackendConfigError } from '../../workflows/backends/errors.ts';
import { LlmClient } from '../../workflows/backends/llm-client.ts';
import { checkBackends } from '../../workflows/backends/preflight.ts';
import { rememberSecretsOf } from '../../security/known-secrets.ts';
import type { TurnAnalysis } from '../../workflows/massgen/analysis-model.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';
import { chooseBackends, massgenConfigProblem } from '../../workflows/massgen/self-analysis/backend-choice.ts';
import { buildExcerptPack } from '../../workflows/massgen/self-analysis/excerpts.ts';
import { assignBackends } from '../../workflows/massgen/self-analysis/perspectives.ts';
import { combinedReport, selfAnalysisArtifact } from '../../workflows/massgen/self-analysis/render.ts';
import { runAnalysts } from '../../workflows/massgen/self-analysis/run-analysts.ts';
import { ANALYSIS_FILE, REPORT_FILE } from '../../workflows/massgen/turn-freshness.ts';
import { writeFilesAtomically } from '../../workflows/massgen/write-files.ts';
import type { CommandIo } from '../command.ts';

export const SELF_ANALYSIS_FILE = 'self-analysis.json';

export interface SelfOptions {
  force: boolean;
  backends: string | undefined;
  config: string;
  budgetUsd: string | undefined;
}

type Fail = (message: string, code?: number) => number;

function rel(cwd: string, p: string): string {
  const r = path.relative(cwd, p);
  return r.startsWith('..') ? p : r || '.';
}

/** Everything that would stop a call, before any: config, backend names, keys, programs. */
function prepare(
  io: CommandIo,
  options: SelfOptions,
): { client: LlmClient; names: string[]; calls: { made: number; cached: number } } | string {
  const budget = options.budgetUsd === undefined ? Number.POSITIVE_INFINITY : Number(options.budgetUsd);
  if (!(budget >= 0)) return `--budget-usd must be a non-negative number, got '${options.budgetUsd}'`;
  const massgen = massgenConfigProblem(io.cwd, options.config);
  if (massgen) return massgen;
  let config;
  try {
    config = loadBackendsConfig(io.cwd, options.config);
  } catch (error) {
    if (error instanceof BackendConfigError) return error.message;
    throw error;
  }
  const choice = chooseBackends(io.cwd, config, options.backends);
  if (!choice.ok) return choice.error;
  const env = { ...process.env, ...io.env };
  const problems = checkBackends(io.cwd, choice.names, env, options.config);
  if (problems.length > 0) return `cannot call the analysts' backends (from ${choice.from}); no call was made:\n  ${problems.join('\n  ')}`;
  rememberSecretsOf(env);
  const calls = { made: 0, cached: 0 };
  const client = new LlmClient({
    config,
    root: io.cwd,
    cacheDir: path.join(io.cwd, '.refinery', 'cache', 'llm'),
    budget: new Budget(budget),
    env,
    onCall: (call) => {
      if (call.cached) calls.cached += 1;
      else calls.made += 1;
    },
  });
  return { client, names: choice.names, calls };
}

export async function selfAnalyze(
  io: CommandIo,
  unit: TurnUnit,
  dir: string,
  options: SelfOptions,
  fail: Fail,
  staleAfterSeconds: number,
): Promise<number> {
  const target = path.join(dir, SELF_ANALYSIS_FILE);
  if (!options.force && existsSync(target)) {
    io.stdout.write(`kept the existing self-analysis ${rel(io.cwd, target)} (pass --force to run the analysts again)\n`);
    return 0;
  }
  const prepared = prepare(io, options);
  if (typeof prepared === 'string') return fail(prepared, 2);
  const { analyzeTurnUnit } = await import('../../workflows/massgen/analyze.ts');
  const { analysis, report } = await analyzeTurnUnit(unit, { staleAfterSeconds, lines: { signal: io.signal } });
  const registry = new SchemaRegistry(io.cwd);
  const facts = registry.validate('turn-analysis', analysis);
  if (!facts.ok) return fail('the analysis does not match schemas/turn-analysis.schema.json; nothing was written', 1);
  // The facts the analysts cite are the facts written: one JSON round trip, as a reader of analysis.json sees them.
  const written = JSON.parse(JSON.stringify(analysis)) as TurnAnalysis;
  const root = unit.turnDir ?? unit.logDir;
  const pack = buildExcerptPack(root, written);
  const backends = assignBackends(prepared.names);
  io.stdout.write(`analysts: correctness=${backends.correctness} efficiency=${backends.efficiency} behavior=${backends.behavior}\n`);
  const analysts = await runAnalysts(prepared.client, backends, { root, analysis: written, pack }, io.signal);
  const result = selfAnalysisArtifact(written.source.session, written.source.turn, analysts);
  const check = registry.validate('self-analysis', result);
  if (!check.ok) return fail(`self-analysis.json would not match its schema (${check.issues[0]?.message}); this is a bug`, 1);
  const base = { analysis: ANALYSIS_FILE, turn: path.relative(dir, root).split(path.sep).join('/') };
  await writeFilesAtomically(dir, [
    [ANALYSIS_FILE, `${JSON.stringify(written, null, 2)}\n`],
    [SELF_ANALYSIS_FILE, `${JSON.stringify(result, null, 2)}\n`],
    [REPORT_FILE, combinedReport(report, result, base)],
  ]);
  for (const a of analysts)
    io.stdout.write(
      a.status === 'failed'
        ? `${a.perspective} (${a.backend}): FAILED: ${a.reason}\n`
        : `${a.perspective} (${a.backend}): ${a.findings.length} finding(s), ${a.unverified.length} unverified\n`,
    );
  const { made, cached } = prepared.calls;
  const cost = prepared.client.budget.spentUsd;
  io.stdout.write(
    `${made} model call(s), ${cached} from the response cache, $${cost.toFixed(4)}\nwrote ${rel(io.cwd, path.join(dir, REPORT_FILE))}\nwrote ${rel(io.cwd, target)}\n`,
  );
  if (result.partial) {
    io.stderr.write('refinery logs: partial self-analysis: an analyst failed (its section says why); exit 1\n');
    return 1;
  }
  return 0;
}
