// self-analyze-turn: one MassGen turn -> its deterministic analysis.json, three model analysts over
// it (self-analysis.json, schema self-analysis) and the combined ANALYSIS_REPORT.md, as
// `refinery logs analyze --mode self` writes them (src/workflows/massgen/self-analysis/self-analyze.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { DEFAULT_STALE_AFTER_SECONDS } from '../src/workflows/massgen/analysis-state.ts';
import { resolveTurnUnit } from '../src/workflows/massgen/discover.ts';
import { JSON_FILE_CAP } from '../src/workflows/massgen/json-file.ts';
import { assignBackends } from '../src/workflows/massgen/self-analysis/perspectives.ts';
import { PIPELINE_WORDS } from '../src/workflows/massgen/self-analysis/backend-choice.ts';
import { analystBackends, selfAnalysisFiles, selfAnalyzeTurn } from '../src/workflows/massgen/self-analysis/self-analyze.ts';
import { llmClientFor, llmParamShape, outputPath } from '../src/workflows/refine/task-support.ts';
import { resolveTurnPath } from './analyze-turn.ts';

const MiB = 1024 * 1024;

/** `''` (the pipeline's default) means: the backends file's self_analysis.backends, else its first OpenAI-compatible backend. */
const given = (backends: string): string | undefined => (backends.trim() === '' ? undefined : backends);

// A foreach stage asks once per turn before the run; the answer is the same for every turn of one run.
const checked = new WeakMap<NodeJS.ProcessEnv, Map<string, string[]>>();

function preflightProblems(root: string, config: string, backends: string, env: NodeJS.ProcessEnv): string[] {
  const key = `${root}\0${config}\0${backends}`;
  const known = checked.get(env) ?? new Map<string, string[]>();
  checked.set(env, known);
  let problems = known.get(key);
  if (!problems) {
    const chosen = analystBackends(root, config, given(backends), env, PIPELINE_WORDS);
    problems = chosen.ok ? [] : [chosen.error];
    known.set(key, problems);
  }
  return problems;
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export default defineTask({
  name: 'self-analyze-turn',
  description:
    'Three model analysts (correctness, efficiency, behavior) over the deterministic analysis of one MassGen turn; findings checked against their evidence',
  params: z.strictObject({
    turn: z.string().min(1).describe('Path of the turn dir (turn_N) or legacy log dir, relative to the root or absolute'),
    backends: z
      .string()
      .default('')
      .describe(
        "Comma list of backend names (round-robin over the analysts); '' for self_analysis.backends or the first OpenAI-compatible backend",
      ),
    staleAfterSeconds: z.number().min(0).default(DEFAULT_STALE_AFTER_SECONDS),
    maxJsonMb: z
      .number()
      .positive()
      .default(JSON_FILE_CAP / MiB),
    ...llmParamShape,
  }),
  outputs: {
    analysis: { schema: 'turn-analysis', description: 'analysis.json: the facts the analysts saw and cite' },
    analysts: { schema: 'self-analysis', description: "self-analysis.json: each analyst's verified and unverified findings" },
    report: { description: "ANALYSIS_REPORT.md: the deterministic report, then the analysts' findings linked to their evidence" },
  },
  preflight: (p, ctx) => preflightProblems(ctx.root, p.config, p.backends, ctx.env),
  async run(ctx) {
    const p = ctx.params;
    const chosen = analystBackends(ctx.root, p.config, given(p.backends), { ...process.env, ...ctx.env }, PIPELINE_WORDS);
    if (!chosen.ok) throw new Error(`self-analyze-turn: ${chosen.error}`);
    const resolved = await resolveTurnUnit(resolveTurnPath(ctx.root, p.turn));
    if (!resolved.ok) throw new Error(`self-analyze-turn: ${resolved.reason}`);
    const files = { analysis: outputPath(ctx, 'analysis'), analysts: outputPath(ctx, 'analysts'), report: outputPath(ctx, 'report') };
    const target = ctx.outputTargets.report;
    if (!target) throw new Error(`stage ${ctx.stage}: output 'report' is not declared`);
    const outcome = await selfAnalyzeTurn({
      root: ctx.root,
      unit: resolved.unit,
      client: llmClientFor(ctx, p),
      backends: assignBackends(chosen.names),
      staleAfterSeconds: p.staleAfterSeconds,
      maxJsonBytes: Math.floor(p.maxJsonMb * MiB),
      signal: ctx.signal,
      onFacts: () => ctx.progress(0.2, 'asking the analysts'),
    });
    if (!outcome.ok) throw new Error(`self-analyze-turn: ${outcome.error}`);
    // Links are written for where the report will live, not for its staging path.
    const text = selfAnalysisFiles(outcome, path.dirname(path.resolve(ctx.root, target)));
    write(files.analysis, text.analysis);
    write(files.analysts, text.selfAnalysis);
    write(files.report, text.report);
    const analysts = outcome.result.analysts;
    const failed = analysts.filter((a) => a.status === 'failed');
    const findings = analysts.reduce((n, a) => n + a.findings.length, 0);
    const unverified = analysts.reduce((n, a) => n + a.unverified.length, 0);
    return {
      summary: `${findings} finding(s), ${unverified} unverified${failed.length ? `, partial: ${failed.map((a) => a.perspective).join(', ')} failed` : ''}`,
      warnings: failed.map(
        (a) => `partial self-analysis: the ${a.perspective} analyst (${a.backend}) failed: ${a.reason}; the next run asks it again`,
      ),
    };
  },
});
