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

/** The graph every part of refinery sees of a plan (the executor, the watch, plan, graph). */
export function planGraph(plan: Pick<Plan, 'instances' | 'loops'>): Graph {
  return buildGraph(planNodes(plan));
}
