// Lays out the pipeline DAG with dagre in a Web Worker: a big graph never freezes the page.
import type { LayoutRequest, LayoutResult } from './layout-types.ts';

interface DagreGraph {
  setGraph(options: Record<string, unknown>): void;
  setDefaultEdgeLabel(fn: () => Record<string, unknown>): void;
  setNode(id: string, value: { width: number; height: number }): void;
  setEdge(from: string, to: string): void;
  node(id: string): { x: number; y: number; width: number; height: number };
  edge(from: string, to: string): { points: Array<{ x: number; y: number }> };
  graph(): { width?: number; height?: number };
}

interface Dagre {
  graphlib: { Graph: new (options?: Record<string, unknown>) => DagreGraph };
  layout(graph: DagreGraph): void;
}

/** The worker's global scope (typed here: the page's DOM types and the worker's cannot share a program). */
declare const self: {
  importScripts(...urls: string[]): void;
  onmessage: ((event: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutResult): void;
  dagre?: Dagre;
};

self.importScripts('/vendor/dagre.min.js');

self.onmessage = (event: MessageEvent<LayoutRequest>) => {
  const request = event.data;
  const dagre = self.dagre as Dagre;
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: request.rankdir, nodesep: 16, ranksep: 48, edgesep: 8, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of request.nodes) g.setNode(n.id, { width: n.width, height: n.height });
  for (const [from, to] of request.edges) g.setEdge(from, to);
  dagre.layout(g);
  const result: LayoutResult = {
    key: request.key,
    nodes: Object.fromEntries(
      request.nodes.map((n) => {
        const p = g.node(n.id);
        return [n.id, { x: p.x, y: p.y, width: n.width, height: n.height }];
      }),
    ),
    edges: request.edges.map(([from, to]) => ({ from, to, points: g.edge(from, to)?.points ?? [] })),
    width: g.graph().width ?? 0,
    height: g.graph().height ?? 0,
  };
  self.postMessage(result);
};
