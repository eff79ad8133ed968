import { Observations, statStamp } from '../state/observations.ts';
import path from 'node:path';
import type { Diagnostic } from '../types/source.ts';
import type { PipelineSpec, StageSpec } from '../types/pipeline.ts';
import { loadPipelineCached } from '../pipeline/cached-load.ts';
import type { StateWarn } from '../state/set-aside.ts';
import { projectResolver, type NameResolver } from '../pipeline/resolve-names.ts';
import { resolveParams } from '../pipeline/params.ts';
import { expandPipeline, normalizeRelative, type Expansion } from '../pipeline/expand.ts';
import { ExprEvalError, lazyRecord, renderTemplate, toText } from '../expr/evaluate.ts';
import { existsInProject } from '../paths/inside-project.ts';

/** A pipeline as a session opens it (and the watch keeps it): checked, with params resolved and stages expanded. */
export interface LoadedPipeline {
  /** Absolute path of the pipeline file. */
  file: string;
  spec: PipelineSpec;
  resolver: NameResolver;
  params: Record<string, unknown>;
  expansion: Expansion;
  /** The rendered `foreach: { glob }` patterns, root-relative. */
  foreachGlobs: string[];
  /** The pipeline file's text this was loaded from (part of the no-op record's key). */
  text: string;
  /** What loading looked at on disk (folder listings of globs, `exists()` answers), for the no-op record. */
  observed: Observations;
}

/** Where loading stopped: the file (parse, schema check), the params, or the expansion (vars, foreach). */
export type LoadPhase = 'load' | 'params' | 'expand';

export type LoadOutcome =
  | { ok: true; pipeline: LoadedPipeline }
  | { ok: false; file: string; diagnostics: Diagnostic[]; source: string; phase: LoadPhase };

export interface LoadOptions {
  /** Told of damaged state files set aside (the parse cache). */
  warn?: StateWarn;
  /** A run's observations, holding the pipeline file's stat taken before anything read it; else made here. */
  observations?: Observations;
  /**
   * Every override must be a param the pipeline declares (refinery run). Without it each
   * pipeline takes the ones it declares and ignores the rest (a watch of several pipelines).
   */
  strictParams?: boolean;
}

const NO_ARTIFACTS = lazyRecord(() => undefined);

/** `--param` overrides the pipeline declares (with several pipelines, each takes its own). */
export function overridesFor(spec: PipelineSpec, overrides: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(overrides).filter(([k]) => k in spec.params));
}

/** The session's first phases: load and check a pipeline file, resolve its params, expand its stages; never prints. */
export async function loadPipeline(
  root: string,
  file: string,
  overrides: Readonly<Record<string, string>>,
  options: LoadOptions = {},
): Promise<LoadOutcome> {
  const resolver = projectResolver(root);
  const absolute = path.resolve(root, file);
  // Made before any stat it records is taken (settled-stat.ts); the pipeline file is recorded
  // by its stat taken before its text is read, as `refinery run` records it.
  let observed = options.observations;
  if (!observed) {
    observed = new Observations();
    observed.file(path.relative(root, absolute), statStamp(absolute));
  }
  const seen = observed;
  const loaded = await loadPipelineCached(root, file, resolver, options.warn);
  if (!loaded.spec) return { ok: false, file, diagnostics: loaded.diagnostics, source: loaded.text, phase: 'load' };
  const exists = (rel: string): boolean => existsInProject(root, rel);
  const { params, diagnostics } = resolveParams(loaded.spec, options.strictParams ? overrides : overridesFor(loaded.spec, overrides), {
    exists: (rel) => seen.probe(rel, exists),
  });
  if (diagnostics.length > 0) return { ok: false, file, diagnostics, source: loaded.text, phase: 'params' };
  const expanded = expand(root, loaded.spec, params, seen);
  if (!expanded.ok) return { ok: false, file, diagnostics: expanded.diagnostics, source: loaded.text, phase: 'expand' };
  return {
    ok: true,
    pipeline: {
      file: absolute,
      spec: loaded.spec,
      resolver,
      params,
      expansion: expanded.expansion,
      foreachGlobs: foreachGlobs(loaded.spec, params, expanded.expansion.plan.vars),
      text: loaded.text,
      observed: seen,
    },
  };
}

/** Expands the pipeline again (a foreach glob's directory changed); the spec and params stay. */
export function reexpand(
  root: string,
  pipeline: LoadedPipeline,
): { ok: true; pipeline: LoadedPipeline } | { ok: false; diagnostics: Diagnostic[] } {
  // The params' `exists()` answers and the pipeline file's stat stand (params are not resolved
  // again, the file not read again); the listings are new.
  const observed = new Observations(pipeline.observed.startedAt);
  for (const [rel, answer] of pipeline.observed.probes) observed.probes.set(rel, answer);
  for (const [rel, stat] of pipeline.observed.files) observed.files.set(rel, stat);
  const expanded = expand(root, pipeline.spec, pipeline.params, observed);
  if (!expanded.ok) return expanded;
  return { ok: true, pipeline: { ...pipeline, expansion: expanded.expansion, observed } };
}

function expand(
  root: string,
  spec: PipelineSpec,
  params: Record<string, unknown>,
  observations: Observations,
): { ok: true; expansion: Expansion } | { ok: false; diagnostics: Diagnostic[] } {
  const expansion = expandPipeline(spec, { root, params, artifacts: NO_ARTIFACTS, observations });
  if (expansion.diagnostics.length > 0) return { ok: false, diagnostics: expansion.diagnostics };
  return { ok: true, expansion };
}

function foreachGlobs(spec: PipelineSpec, params: Record<string, unknown>, vars: Record<string, unknown>): string[] {
  const stages: StageSpec[] = spec.stages.flatMap((s) => (s.kind === 'loop' ? s.stages : [s]));
  const out = new Set<string>();
  for (const stage of stages) {
    if (stage.foreach?.kind !== 'glob') continue;
    for (const pattern of stage.foreach.patterns) {
      try {
        const names = { params, vars, pipeline: { name: spec.name }, stage: { id: stage.id }, artifacts: NO_ARTIFACTS };
        out.add(normalizeRelative(toText(renderTemplate(pattern, { vars: names, effects: { exists: () => false } }))));
      } catch (error) {
        if (!(error instanceof ExprEvalError)) throw error;
      }
    }
  }
  return [...out].sort();
}
