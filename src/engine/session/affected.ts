import type { Plan } from '../types/plan.ts';
import { buildGraph, downstreamOf } from '../graph/graph.ts';
import { instanceNode } from '../graph/plan-graph.ts';
import { isGlob, matchGlob } from '../paths/glob.ts';

/**
 * The stages a set of changed files can affect: those that read or write one of them, and
 * everything downstream. Undefined when a changed file is not a plain input or output of any
 * stage (a task's source, a schema) or the pipeline has loops: then every stage is checked.
 */
export function affectedStages(plan: Plan, changed: readonly string[]): Set<string> | undefined {
  if (plan.loops.length > 0) return undefined;
  const changedSet = new Set(changed);
  const explained = new Set<string>();
  const hit = new Set<string>();
  const touch = (id: string, file: string): void => {
    hit.add(id);
    explained.add(file);
  };
  for (const inst of plan.instances) {
    for (const o of Object.values(inst.outputs)) if (changedSet.has(o.path)) touch(inst.id, o.path);
    for (const pattern of inst.inputs) {
      if (changedSet.has(pattern)) touch(inst.id, pattern);
      else if (isGlob(pattern))
        for (const f of changed)
          if (matchGlob(pattern, f)) touch(inst.id, f);
          else for (const f of changed) if (f.startsWith(`${pattern}/`)) touch(inst.id, f);
    }
  }
  if (explained.size !== changedSet.size) return undefined;
  const graph = buildGraph(plan.instances.map(instanceNode));
  return downstreamOf(hit, graph.dependents);
}
