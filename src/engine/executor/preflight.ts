import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic } from '../types/source.ts';
import type { LoopInstance, Plan, StageInstance } from '../types/plan.ts';
import type { Template } from '../types/expr.ts';
import { collectRefs } from '../expr/template.ts';
import { evaluateCondition, lazyRecord } from '../expr/evaluate.ts';
import type { Expr } from '../types/expr.ts';
import { loadTask } from './task-loader.ts';
import { renderWith, scopeFor } from './render.ts';

export interface PreflightOptions {
  root: string;
  env: NodeJS.ProcessEnv;
  taskFile(name: string): string | undefined;
  expandIteration(loop: LoopInstance, iteration: number): { instances: StageInstance[] };
  /** The stages this run may run (a run that checks only what changed); all of them when absent. */
  select?: ReadonlySet<string>;
}

function templatesOf(value: unknown, out: Template[]): Template[] {
  if (typeof value === 'object' && value !== null && 'parts' in value && 'source' in value) out.push(value as Template);
  else if (Array.isArray(value)) for (const v of value) templatesOf(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) templatesOf(v, out);
  return out;
}

/** A stage's params can be known before the run only when they read no artifact. */
function readsArtifacts(inst: StageInstance): boolean {
  const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
  for (const t of templatesOf(inst.spec.kind === 'task' ? inst.spec.with : undefined, []))
    for (const p of t.parts) if (typeof p !== 'string') collectRefs(p, refs);
  return refs.roots.has('artifacts');
}

function whenReadsArtifacts(when: Expr): boolean {
  const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
  collectRefs(when, refs);
  return refs.roots.has('artifacts');
}

/**
 * Asks every task of the run (the first iteration of each loop included) what would stop it,
 * before any stage starts: a task's `preflight` names, for example, a backend that is not
 * configured or a key variable that is not set. Stages whose params read artifacts are left to
 * the run. Each problem is reported once, with the stages it concerns.
 */
export async function preflightPlan(plan: Plan, options: PreflightOptions): Promise<Diagnostic[]> {
  // A run that checks only what changed runs nothing else: the rest needs no preflight (nor its task loaded).
  const chosen = options.select;
  const loops = chosen ? plan.loops.filter((l) => chosen.has(l.id)) : plan.loops;
  const instances = [
    ...(chosen ? plan.instances.filter((i) => chosen.has(i.id)) : plan.instances),
    ...loops.flatMap((loop) => options.expandIteration(loop, 1).instances),
  ];
  const stagesByProblem = new Map<string, string[]>();
  for (const inst of instances) {
    if (inst.spec.kind !== 'task' || readsArtifacts(inst)) continue;
    const file = options.taskFile(inst.spec.task);
    if (!file) continue;
    let task;
    try {
      task = await loadTask(file);
    } catch {
      continue; // the stage reports a task that cannot load when it runs
    }
    if (!task.preflight) continue;
    const targets = Object.fromEntries(Object.entries(inst.outputs).map(([name, o]) => [name, o.path]));
    const scope = scopeFor(inst, {
      params: plan.params,
      vars: plan.vars,
      pipeline: plan.pipeline.name,
      artifacts: lazyRecord(() => undefined),
      outputs: targets,
      inputs: inst.inputs,
      exists: (rel) => existsSync(path.resolve(options.root, rel)),
    });
    let raw: unknown;
    try {
      // A stage whose `when` is false before the run starts will not run: nothing to check.
      if (inst.spec.when && !whenReadsArtifacts(inst.spec.when) && !evaluateCondition(inst.spec.when, scope)) continue;
      raw = renderWith(inst.spec.with, scope);
    } catch {
      continue;
    }
    const parsed = task.params.safeParse(raw);
    if (!parsed.success) continue; // the stage reports its own params when it runs
    for (const problem of await task.preflight(parsed.data, { root: options.root, env: options.env })) {
      stagesByProblem.set(problem, [...(stagesByProblem.get(problem) ?? []), inst.id]);
    }
  }
  return [...stagesByProblem].map(([problem, stages]) => ({
    severity: 'error' as const,
    code: 'preflight-failed' as const,
    message: `${problem} (needed by ${stages.length > 3 ? `${stages.slice(0, 3).join(', ')} and ${stages.length - 3} more` : stages.join(', ')})`,
  }));
}
