import type { Plan } from '../types/plan.ts';
import { downstreamOf, type Graph } from '../graph/graph.ts';

/**
 * What a watch cycle hands the executor: the affected nodes and everything downstream of them,
 * plus every upstream node that cannot stand in for itself with a recorded fingerprint (no
 * record: it failed, was skipped or never ran; or a loop), so the cycle decides exactly what a
 * full `refinery run` would.
 */
export function selectionFor(affected: Iterable<string>, graph: Graph, settled: (id: string) => boolean): Set<string> {
  const selected = downstreamOf(
    [...affected].filter((id) => graph.deps.has(id)),
    graph.dependents,
  );
  const queue = [...selected];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    for (const dep of graph.deps.get(id) ?? []) {
      if (selected.has(dep) || settled(dep)) continue;
      selected.add(dep);
      queue.push(dep);
    }
  }
  return selected;
}

/**
 * The part of a plan a watch cycle needs: the selected stages and those they depend on
 * directly (their recorded fingerprints stand in for everything further up). The executor then
 * builds a schedule of a few stages instead of all of them. Plans with loops go whole.
 */
export function planFor(plan: Plan, selection: ReadonlySet<string>, graph: Graph): Plan {
  if (plan.loops.length > 0) return plan;
  const wanted = new Set(selection);
  for (const id of selection) for (const dep of graph.deps.get(id) ?? []) wanted.add(dep);
  if (wanted.size === plan.instances.length) return plan;
  return { ...plan, instances: plan.instances.filter((i) => wanted.has(i.id)) };
}
