// One self-analysis of one MassGen turn, shared by `refinery logs analyze --mode self` and the
// self-analysis pipeline's task: which backends (checked before any call), the deterministic
// analysis, the three analysts, and the three files the caller writes where it writes.
import path from 'node:path';
import { SchemaRegistry } from '../../../engine/artifacts/schema-registry.ts';
import { loadBackendsConfig } from '../../backends/config-file.ts';
import type { BackendsConfig } from '../../backends/config-schema.ts';
import { BackendConfigError } from '../../backends/errors.ts';
import type { LlmClient } from '../../backends/llm-client.ts';
import { checkBackends } from '../../backends/preflight.ts';
import type { TurnAnalysis } from '../analysis-model.ts';
import { analyzeTurnUnit } from '../analyze.ts';
import type { TurnUnit } from '../model.ts';
import { ANALYSIS_FILE } from '../turn-freshness.ts';
import { CLI_WORDS, type ChoiceWords, chooseBackends, massgenConfigProblem } from './backend-choice.ts';
import { buildExcerptPack } from './excerpts.ts';
import type { Perspective } from './perspectives.ts';
import { combinedReport, type SelfAnalysis, selfAnalysisArtifact } from './render.ts';
import { runAnalysts } from './run-analysts.ts';

export const SELF_ANALYSIS_FILE = 'self-analysis.json';

export type AnalystBackends = { ok: true; config: BackendsConfig; names: string[]; from: string } | { ok: false; error: string };

/**
 * The analysts' backends and every problem that would stop a call, before any: a MassGen config
 * given as the backends file, a bad backends file, an unknown name, a key variable not set, a
 * program not installed. `given` is the comma list the user passed (undefined: from the file);
 * `words` how they pass it, for the messages.
 */
export function analystBackends(
  root: string,
  configFile: string,
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  words: ChoiceWords = CLI_WORDS,
): AnalystBackends {
  const massgen = massgenConfigProblem(root, configFile, words);
  if (massgen) return { ok: false, error: massgen };
  let config: BackendsConfig;
  try {
    config = loadBackendsConfig(root, configFile);
  } catch (error) {
    if (error instanceof BackendConfigError) return { ok: false, error: error.message };
    throw error;
  }
  const choice = chooseBackends(root, config, given, words);
  if (!choice.ok) return choice;
  const problems = checkBackends(root, choice.names, env, configFile);
  if (problems.length > 0)
    return { ok: false, error: `cannot call the analysts' backends (from ${choice.from}); no call was made:\n  ${problems.join('\n  ')}` };
  return { ok: true, config, names: choice.names, from: choice.from };
}

export interface SelfAnalysisInput {
  /** The project root: where the schemas are. */
  root: string;
  unit: TurnUnit;
  client: LlmClient;
  backends: Readonly<Record<Perspective, string>>;
  staleAfterSeconds: number;
  /** End-of-run JSON files over this size are skipped (analyze-turn's maxJsonMb); default: the analysis's own cap. */
  maxJsonBytes?: number;
  signal: AbortSignal;
  /** Called once the facts are known and valid, before the first model call. */
  onFacts?(analysis: TurnAnalysis): void;
}

export type SelfAnalysisOutcome =
  | { ok: true; analysis: TurnAnalysis; deterministicReport: string; result: SelfAnalysis; turnRoot: string }
  | { ok: false; error: string };

/** The deterministic facts, then the three analysts over them; the result checked against its schema. */
export async function selfAnalyzeTurn(input: SelfAnalysisInput): Promise<SelfAnalysisOutcome> {
  const { analysis, report } = await analyzeTurnUnit(input.unit, {
    staleAfterSeconds: input.staleAfterSeconds,
    ...(input.maxJsonBytes === undefined ? {} : { maxJsonBytes: input.maxJsonBytes }),
    lines: { signal: input.signal },
  });
  const registry = new SchemaRegistry(input.root);
  if (!registry.validate('turn-analysis', analysis).ok)
    return { ok: false, error: 'the analysis does not match schemas/turn-analysis.schema.json; nothing was written' };
  // The facts the analysts cite are the facts written: one JSON round trip, as a reader of analysis.json sees them.
  const written = JSON.parse(JSON.stringify(analysis)) as TurnAnalysis;
  input.onFacts?.(written);
  const turnRoot = input.unit.turnDir ?? input.unit.logDir;
  const pack = buildExcerptPack(turnRoot, written);
  const analysts = await runAnalysts(input.client, input.backends, { root: turnRoot, analysis: written, pack }, input.signal);
  const result = selfAnalysisArtifact(written.source.session, written.source.turn, analysts);
  const check = registry.validate('self-analysis', result);
  if (!check.ok) return { ok: false, error: `self-analysis.json would not match its schema (${check.issues[0]?.message}); this is a bug` };
  return { ok: true, analysis: written, deterministicReport: report, result, turnRoot };
}

/** The three files of a self-analysis written in `dir`: the report links to analysis.json there and to the turn's files. */
export function selfAnalysisFiles(
  outcome: Extract<SelfAnalysisOutcome, { ok: true }>,
  dir: string,
): { analysis: string; selfAnalysis: string; report: string } {
  const base = { analysis: ANALYSIS_FILE, turn: path.relative(dir, outcome.turnRoot).split(path.sep).join('/') };
  return {
    analysis: `${JSON.stringify(outcome.analysis, null, 2)}\n`,
    selfAnalysis: `${JSON.stringify(outcome.result, null, 2)}\n`,
    report: combinedReport(outcome.deterministicReport, outcome.result, base),
  };
}
