import { isGlob, matchGlob, staticPrefix } from '../paths/glob.ts';

/** What the graph needs to know of a stage; paths are normalized and relative to the root. */
export interface GraphNode {
  id: string;
  needs: readonly string[];
  inputs: readonly string[];
  outputs: readonly string[];
}

export interface Graph {
  /** id -> ids it depends on (explicit needs and implied by paths), sorted. */
  readonly deps: ReadonlyMap<string, readonly string[]>;
  /** id -> ids that depend on it, sorted. */
  readonly dependents: ReadonlyMap<string, readonly string[]>;
  /** Needs naming no node, for the caller to report. */
  readonly missing: ReadonlyArray<{ from: string; need: string }>;
}

/** Edges from `needs`, and from an input (path or glob) that is another node's output. */
export function buildGraph(nodes: readonly GraphNode[]): Graph {
  const ids = new Set(nodes.map((n) => n.id));
  const producer = new Map<string, string>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n.id);
  const outputs = new SortedPaths([...producer.keys()]);
  const deps = new Map<string, Set<string>>();
  const missing: Array<{ from: string; need: string }> = [];
  for (const n of nodes) {
    const set = new Set<string>();
    for (const need of n.needs) {
      if (ids.has(need)) set.add(need);
      else missing.push({ from: n.id, need });
    }
    for (const input of n.inputs) {
      if (isGlob(input)) {
        for (const out of outputs.startingWith(staticPrefix(input))) {
          const p = producer.get(out) as string;
          // A stage's own outputs (a turn's analysis beside the turn's files) are no edge: the
          // pattern is not even compiled when they are all it could match.
          if (p !== n.id && !set.has(p) && matchGlob(input, out)) set.add(p);
        }
      } else {
        const p = producer.get(input);
        if (p !== undefined) set.add(p);
      }
    }
    set.delete(n.id);
    deps.set(n.id, set);
  }
  const dependents = new Map<string, string[]>(nodes.map((n) => [n.id, []]));
  for (const [id, set] of deps) for (const d of set) dependents.get(d)?.push(id);
  for (const list of dependents.values()) list.sort();
  return { deps: new Map([...deps].map(([k, v]) => [k, [...v].sort()])), dependents, missing };
}

/**
 * Paths in code-unit order, so those starting with a string are one run of them: a glob can only
 * match a path that starts with its fixed leading folders, and a plan with a glob input per
 * foreach item would otherwise test every item's glob against every output.
 */
class SortedPaths {
  private readonly paths: string[];

  constructor(paths: string[]) {
    this.paths = paths.sort();
  }

  *startingWith(prefix: string): Generator<string> {
    const { paths } = this;
    let low = 0;
    let high = paths.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((paths[mid] as string) < prefix) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < paths.length && (paths[i] as string).startsWith(prefix); i += 1) yield paths[i] as string;
  }
}

/** One cycle as a path that starts and ends on the same id, or undefined. Deterministic. */
export function findCycle(deps: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      const s = state.get(d);
      if (s === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (s === undefined) {
        const found = visit(d);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 2);
    return undefined;
  };
  for (const id of [...deps.keys()].sort()) {
    if (state.get(id) === undefined) {
      const found = visit(id);
      if (found) return found.reverse();
    }
  }
  return undefined;
}

/** Every id in dependency order (dependencies first); deterministic for a given map. Assumes no cycle. */
export function topologicalOrder(deps: ReadonlyMap<string, readonly string[]>): string[] {
  const remaining = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const [id, ds] of deps) {
    remaining.set(id, ds.length);
    for (const d of ds) {
      const list = dependents.get(d);
      if (list) list.push(id);
      else dependents.set(d, [id]);
    }
  }
  const order = [...remaining]
    .filter(([, n]) => n === 0)
    .map(([id]) => id)
    .sort();
  for (let i = 0; i < order.length; i += 1) {
    for (const dep of dependents.get(order[i] as string) ?? []) {
      const left = (remaining.get(dep) as number) - 1;
      remaining.set(dep, left);
      if (left === 0) order.push(dep);
    }
  }
  return order;
}

/** The given ids and everything downstream of them. */
export function downstreamOf(ids: Iterable<string>, dependents: Pick<ReadonlyMap<string, readonly string[]>, 'get'>): Set<string> {
  const seen = new Set<string>();
  const queue = [...ids];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(dependents.get(id) ?? []));
  }
  return seen;
}

/** The given ids and everything they need, transitively. */
export function upstreamOf(ids: Iterable<string>, deps: ReadonlyMap<string, readonly string[]>): Set<string> {
  return downstreamOf(ids, deps);
}
