import type { Plan, StageInstance } from '../types/plan.ts';
import { buildGraph, type Graph, type GraphNode } from './graph.ts';

/** A stage instance as a graph node: its needs, and the paths it reads and writes. */
export function instanceNode(i: StageInstance): GraphNode {
  return { id: i.id, needs: i.needs, inputs: i.inputs, outputs: Object.values(i.outputs).map((o) => o.path) };
}

/** The nodes of a plan: its stage instances and its loop gates. */
export function planNodes(plan: Pick<Plan, 'instances' | 'loops'>): GraphNode[] {
  const nodes = plan.instances.map(instanceNode);
  for (const l of plan.loops) nodes.push({ id: l.id, needs: l.needs, inputs: [], outputs: [] });
  return nodes;
}

const built = new WeakMap<readonly StageInstance[], { loops: Plan['loops']; graph: Graph }>();

/**
 * The graph every part of refinery sees of a plan (the executor, the watch, plan, graph). Built
 * once per plan: a run asks for it in several steps (the stages a change reaches, the executor,
 * the plan record), and neither a plan, once expanded, nor a graph is changed by anyone.
 */
export function planGraph(plan: Pick<Plan, 'instances' | 'loops'>): Graph {
  const known = built.get(plan.instances);
  if (known?.loops === plan.loops) return known.graph;
  const graph = buildGraph(planNodes(plan));
  built.set(plan.instances, { loops: plan.loops, graph });
  return graph;
}
