// The pipeline DAG as the page draws it: foreach instances folded into one node with counts, a
// loop as one group, and, past a node budget, whole depth layers folded into one node each (a
// 10,000-stage graph is drawn as at most `maxNodes` boxes; the stage table pages through the rest).
// Pure: plain data in, plain data out.

export type UiStageState = 'up-to-date' | 'stale' | 'running' | 'failed' | 'blocked' | 'skipped' | 'never-run';

export const STATE_ORDER: readonly UiStageState[] = ['running', 'failed', 'blocked', 'stale', 'never-run', 'skipped', 'up-to-date'];

export interface FoldInput {
  id: string;
  needs: readonly string[];
  /** 'loop' for a loop gate of the plan. */
  kind: 'stage' | 'loop';
  state: UiStageState;
  /** Loop member stage names, for a loop gate. */
  members?: readonly string[];
}

export interface GraphNode {
  id: string;
  label: string;
  kind: 'stage' | 'foreach' | 'loop' | 'layer';
  /** How many stage instances it stands for. */
  size: number;
  counts: Partial<Record<UiStageState, number>>;
  /** The state that matters most among its members (running, then failed, ...). */
  state: UiStageState;
  /** For a loop: the stages of one iteration. */
  members?: readonly string[];
}

export interface FoldedGraph {
  nodes: GraphNode[];
  edges: Array<[string, string]>;
  /** True when depth layers were folded: node ids are no longer stage names. */
  layered: boolean;
}

/** The node a stage instance belongs to: `s[key]` → `s`, `loop#3.stage[key]` → `loop`. */
export function groupOf(id: string): string {
  const hash = id.indexOf('#');
  const bracket = id.indexOf('[');
  const cut = [hash, bracket].filter((i) => i > 0);
  return cut.length === 0 ? id : id.slice(0, Math.min(...cut));
}

export function dominantState(counts: Partial<Record<UiStageState, number>>): UiStageState {
  return STATE_ORDER.find((s) => (counts[s] ?? 0) > 0) ?? 'never-run';
}

export function foldGraph(items: readonly FoldInput[], maxNodes = 150): FoldedGraph {
  const nodes = new Map<string, GraphNode>();
  const nodeOf = new Map<string, string>();
  for (const item of items) {
    const key = item.kind === 'loop' ? item.id : groupOf(item.id);
    nodeOf.set(item.id, key);
    let node = nodes.get(key);
    if (!node) {
      const kind: GraphNode['kind'] = item.kind === 'loop' ? 'loop' : key === item.id ? 'stage' : 'foreach';
      node = { id: key, label: key, kind, size: 0, counts: {}, state: item.state, ...(item.members ? { members: item.members } : {}) };
      nodes.set(key, node);
    }
    if (item.kind === 'loop') continue;
    node.size += 1;
    node.counts[item.state] = (node.counts[item.state] ?? 0) + 1;
  }
  for (const node of nodes.values()) if (node.kind !== 'loop' || node.size > 0) node.state = dominantState(node.counts);
  const edgeSet = new Set<string>();
  const edges: Array<[string, string]> = [];
  for (const item of items) {
    const to = nodeOf.get(item.id) as string;
    for (const need of item.needs) {
      const from = nodeOf.get(need) ?? groupOf(need);
      if (from === to || !nodes.has(from)) continue;
      const key = `${from}\u0000${to}`;
      if (edgeSet.has(key)) continue;
      edgeSet.add(key);
      edges.push([from, to]);
    }
  }
  if (nodes.size <= maxNodes) return { nodes: [...nodes.values()], edges, layered: false };
  return foldLayers([...nodes.values()], edges, maxNodes);
}

/** Longest-path depth of each node (sources are 0); edges of a DAG, any order. */
export function depths(ids: readonly string[], edges: ReadonlyArray<readonly [string, string]>): Map<string, number> {
  const incoming = new Map<string, number>(ids.map((id) => [id, 0]));
  const out = new Map<string, string[]>();
  for (const [from, to] of edges) {
    incoming.set(to, (incoming.get(to) ?? 0) + 1);
    let list = out.get(from);
    if (!list) out.set(from, (list = []));
    list.push(to);
  }
  const depth = new Map<string, number>(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => (incoming.get(id) ?? 0) === 0);
  for (let i = 0; i < queue.length; i += 1) {
    const id = queue[i] as string;
    for (const next of out.get(id) ?? []) {
      depth.set(next, Math.max(depth.get(next) ?? 0, (depth.get(id) ?? 0) + 1));
      const left = (incoming.get(next) ?? 0) - 1;
      incoming.set(next, left);
      if (left === 0) queue.push(next);
    }
  }
  return depth;
}

function foldLayers(nodes: GraphNode[], edges: Array<[string, string]>, maxNodes: number): FoldedGraph {
  const depth = depths(
    nodes.map((n) => n.id),
    edges,
  );
  const maxDepth = Math.max(0, ...depth.values());
  // Consecutive layers share a box when there are more layers than boxes.
  const perBox = Math.max(1, Math.ceil((maxDepth + 1) / maxNodes));
  const boxes = new Map<string, GraphNode & { from: number; to: number }>();
  const boxOf = new Map<string, string>();
  for (const node of nodes) {
    const d = depth.get(node.id) ?? 0;
    const first = Math.floor(d / perBox) * perBox;
    const key = `layer:${first}`;
    let box = boxes.get(key);
    if (!box) {
      box = {
        id: key,
        label: '',
        kind: 'layer',
        size: 0,
        counts: {},
        state: 'never-run',
        from: first,
        to: Math.min(first + perBox - 1, maxDepth),
      };
      boxes.set(key, box);
    }
    box.size += node.size;
    for (const [state, n] of Object.entries(node.counts))
      box.counts[state as UiStageState] = (box.counts[state as UiStageState] ?? 0) + (n ?? 0);
    boxOf.set(node.id, key);
  }
  const out: GraphNode[] = [];
  for (const box of [...boxes.values()].sort((a, b) => a.from - b.from)) {
    const { from, to, ...node } = box;
    node.state = dominantState(node.counts);
    node.label = from === to ? `depth ${from}` : `depth ${from}-${to}`;
    out.push(node);
  }
  const seen = new Set<string>();
  const folded: Array<[string, string]> = [];
  for (const [a, b] of edges) {
    const from = boxOf.get(a) as string;
    const to = boxOf.get(b) as string;
    if (from === to || seen.has(`${from}\u0000${to}`)) continue;
    seen.add(`${from}\u0000${to}`);
    folded.push([from, to]);
  }
  return { nodes: out, edges: folded, layered: true };
}
