// The session's load and plan phases: what a run executes, either the whole pipeline loaded,
// checked and expanded, or the part of the last run's plan that the changed files reach.
import path from 'node:path';
import type { ChangedFiles } from '../state/run-manifest.ts';
import type { Observations } from '../state/observations.ts';
import type { StateWarn } from '../state/set-aside.ts';
import type { PipelineSpec } from '../types/pipeline.ts';
import type { LoopInstance, Plan, StageInstance } from '../types/plan.ts';
import type { Diagnostic } from '../types/source.ts';
import { projectResolver, type NameResolver } from '../pipeline/resolve-names.ts';
import { Locator } from '../pipeline/locate.ts';
import { readPartialPlan } from '../pipeline/plan-record.ts';
import { parseLocatedYaml } from '../pipeline/yaml-source.ts';
import { readSource } from './find-pipeline.ts';
import type { LoadOutcome } from './open-pipeline.ts';

export interface RunTarget {
  plan: Plan;
  spec: PipelineSpec;
  resolver: NameResolver;
  expandIteration(loop: LoopInstance, iteration: number): { instances: StageInstance[]; diagnostics: Diagnostic[] };
  select?: Set<string>;
  /** Read back from the last run's plan: the stages left out of `plan` (all up to date) and every stage's id. */
  partial?: { unlisted: string[]; stages: string[] };
}

/** The last run's plan, cut down to what the changed files reach (no pipeline parse, no expansion); undefined to open it in full. */
export function partialTarget(root: string, pipelineFile: string, key: string, changed: ChangedFiles): RunTarget | undefined {
  const absolute = path.resolve(root, pipelineFile);
  let locator: Locator | undefined;
  // Read only for a message that needs a place in it (its stat has just been found unchanged).
  const locate = (at: Array<string | number>) => {
    if (!locator) {
      const text = readSource(absolute);
      locator = new Locator(absolute, text, parseLocatedYaml(absolute, text));
    }
    return locator.span(at, 'key');
  };
  const read = readPartialPlan(root, pipelineFile, key, changed.files, locate);
  if (!read) return undefined;
  const listed = new Set(read.plan.instances.map((i) => i.id));
  return {
    plan: read.plan,
    spec: read.plan.pipeline,
    resolver: projectResolver(root),
    expandIteration: () => {
      throw new Error('internal: a plan read back from the no-op record has no loops');
    },
    select: read.select,
    partial: { unlisted: changed.stages.filter((id) => !listed.has(id)), stages: changed.stages },
  };
}

/** The pipeline loaded, checked and expanded in full; with `changed`, only the stages those files reach are selected. */
export async function fullTarget(
  root: string,
  pipelineFile: string,
  params: Readonly<Record<string, string>>,
  observations: Observations,
  changed: ChangedFiles | undefined,
  warn: StateWarn,
): Promise<{ target: RunTarget } | Extract<LoadOutcome, { ok: false }>> {
  // Loaded only for a full check: a run of what a few changed files reach parses no YAML.
  const [{ loadPipeline }, { affectedStages }] = await Promise.all([import('./open-pipeline.ts'), import('./affected.ts')]);
  const opened = await loadPipeline(root, pipelineFile, params, { warn, observations, strictParams: true });
  if (!opened.ok) return opened;
  const { pipeline } = opened;
  // Before any stage's inputs are walked, what observations holds is what the expansion listed.
  const select = changed ? affectedStages(pipeline.expansion.plan, { ...changed, listedByExpansion: observations.dirs }) : undefined;
  return {
    target: {
      plan: pipeline.expansion.plan,
      spec: pipeline.spec,
      resolver: pipeline.resolver,
      expandIteration: (loop, i) => pipeline.expansion.expandIteration(loop, i),
      ...(select ? { select } : {}),
    },
  };
}
