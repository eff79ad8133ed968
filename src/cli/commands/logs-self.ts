// `refinery logs analyze --mode self`: the deterministic analysis, then three model analysts over it
// (src/workflows/massgen/self-analysis/). Exit 0: every analyst answered; 1: partial (an analyst failed,
// the report is written); 2: bad input or a backend that cannot be called (before any call).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Budget } from '../../workflows/backends/budget.ts';
import { LlmClient } from '../../workflows/backends/llm-client.ts';
import { rememberSecretsOf } from '../../security/known-secrets.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';
import { assignBackends } from '../../workflows/massgen/self-analysis/perspectives.ts';
import {
  analystBackends,
  SELF_ANALYSIS_FILE,
  selfAnalysisFiles,
  selfAnalyzeTurn,
} from '../../workflows/massgen/self-analysis/self-analyze.ts';
import { ANALYSIS_FILE, REPORT_FILE } from '../../workflows/massgen/turn-freshness.ts';
import { writeFilesAtomically } from '../../workflows/massgen/write-files.ts';
import type { CommandIo } from '../command.ts';

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
  const env = { ...process.env, ...io.env };
  const chosen = analystBackends(io.cwd, options.config, options.backends, env);
  if (!chosen.ok) return chosen.error;
  rememberSecretsOf(env);
  const calls = { made: 0, cached: 0 };
  const client = new LlmClient({
    config: chosen.config,
    root: io.cwd,
    cacheDir: path.join(io.cwd, '.refinery', 'cache', 'llm'),
    budget: new Budget(budget),
    env,
    onCall: (call) => {
      if (call.cached) calls.cached += 1;
      else calls.made += 1;
    },
  });
  return { client, names: chosen.names, calls };
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
  const backends = assignBackends(prepared.names);
  const outcome = await selfAnalyzeTurn({
    root: io.cwd,
    unit,
    client: prepared.client,
    backends,
    staleAfterSeconds,
    signal: io.signal,
    onFacts: () =>
      io.stdout.write(`analysts: correctness=${backends.correctness} efficiency=${backends.efficiency} behavior=${backends.behavior}\n`),
  });
  if (!outcome.ok) return fail(outcome.error, 1);
  const files = selfAnalysisFiles(outcome, dir);
  await writeFilesAtomically(dir, [
    [ANALYSIS_FILE, files.analysis],
    [SELF_ANALYSIS_FILE, files.selfAnalysis],
    [REPORT_FILE, files.report],
  ]);
  for (const a of outcome.result.analysts)
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
  if (outcome.result.partial) {
    io.stderr.write('refinery logs: partial self-analysis: an analyst failed (its section says why); exit 1\n');
    return 1;
  }
  return 0;
}
