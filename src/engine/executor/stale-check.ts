import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Expr } from '../types/expr.ts';
import type { StageInstance } from '../types/plan.ts';
import { evaluateCondition } from '../expr/evaluate.ts';
import { ArtifactReader } from './artifact-reader.ts';
import { scopeFor } from './render.ts';

export interface StaleCheckContext {
  root: string;
  pipeline: string;
  params: Record<string, unknown>;
  vars: Record<string, unknown>;
  instances: readonly StageInstance[];
  /** How `exists()` is answered (a run records its answers); default: the disk. */
  exists?: (rel: string) => boolean;
}

/**
 * The stages whose `stale_if` holds on their outputs as they are now: their last result asks
 * to be redone even if nothing they read changes (a MassGen turn still in progress). A
 * condition that cannot be evaluated counts as false, as it does in a run.
 */
export function stagesAskingToBeRedone(ctx: StaleCheckContext): string[] {
  return stagesWhere(ctx, (spec) => spec.staleIf);
}

/**
 * The stages whose `final_if` holds on their outputs as they are now: their input files will not
 * be rewritten (a finished MassGen turn). A condition that cannot be evaluated counts as false:
 * the stage's files keep their stats in the record.
 */
export function stagesWithFinalInputs(ctx: StaleCheckContext): string[] {
  return stagesWhere(ctx, (spec) => spec.finalIf);
}

function stagesWhere(ctx: StaleCheckContext, condition: (spec: StageInstance['spec']) => Expr | undefined): string[] {
  const reader = new ArtifactReader(ctx.root);
  const artifacts = reader.view(ctx.instances);
  const exists = ctx.exists ?? ((p: string): boolean => existsSync(path.join(ctx.root, p)));
  const ids: string[] = [];
  for (const inst of ctx.instances) {
    const expr = condition(inst.spec);
    if (!expr) continue;
    const outputs = Object.fromEntries(Object.entries(inst.outputs).map(([k, o]) => [k, o.path]));
    const scope = scopeFor(inst, { params: ctx.params, vars: ctx.vars, pipeline: ctx.pipeline, artifacts, outputs, inputs: [], exists });
    try {
      if (evaluateCondition(expr, { ...scope, vars: { ...scope.vars, self: reader.own(inst) } })) ids.push(inst.id);
    } catch {
      /* false: the run reports the problem when it assesses the stage */
    }
    // Over a thousand stages, the outputs read would otherwise all stay in memory until the end.
    for (const o of Object.values(inst.outputs)) reader.forget(o.path);
  }
  return ids.sort();
}
