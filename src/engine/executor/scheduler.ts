import type { StageStatus } from '../types/events.ts';

/**
 * Which node may go next: readiness, blocked dependencies and the one stop rule, over plain
 * data. Pure: the executor decides what a ready node does (assess, run, expand a loop) and
 * tells the schedule how it ended. Generic over what a node carries, so tests use literals.
 */

interface NodeBase {
  id: string;
  /** Ids this node waits for, all present in the schedule. */
  deps: string[];
  /** Ids that wait for this node. */
  dependents: string[];
  /** Dependencies not settled yet: the node is ready at 0. */
  waiting: number;
  /** Set once, when the node has settled. */
  status?: StageStatus;
  /**
   * What it wrote, as stages that `needs:` it fold into their fingerprints (outputsDigest; 'skipped'
   * for a skipped stage): set by the executor when first asked for, after the node has settled.
   */
  wrote?: string;
}

/** One stage instance. */
export interface StageNode<S> extends NodeBase {
  kind: 'stage';
  stage: S;
}

/** A loop: expanded one iteration at a time; settles once the last iteration has. */
export interface LoopGate<S, L> extends NodeBase {
  kind: 'loop';
  loop: L;
  /** The iteration running (0 before the first). */
  iteration: number;
  /** Every iteration's stages so far, in order. */
  members: Array<StageNode<S>>;
  /** The current iteration's stages. */
  current: Array<StageNode<S>>;
  /** Stages of the current iteration not yet settled; undefined between iterations. */
  pending: number | undefined;
}

export type ScheduleNode<S, L> = StageNode<S> | LoopGate<S, L>;

export interface StageEntry<S> {
  kind: 'stage';
  id: string;
  deps: readonly string[];
  stage: S;
}

export interface LoopEntry<L> {
  kind: 'loop';
  id: string;
  deps: readonly string[];
  loop: L;
}

export type NodeEntry<S, L> = StageEntry<S> | LoopEntry<L>;

export interface Schedule<S, L> {
  readonly nodes: Map<string, ScheduleNode<S, L>>;
  readonly keepGoing: boolean;
  /** Nodes without a status. */
  unsettled: number;
  /** Stages handed out to run and not finished. */
  running: number;
  /** Some node failed. */
  failed: boolean;
  /** The run was interrupted (Ctrl-C, the watch stopping). */
  interrupted: boolean;
}

/** Why nothing more may start; undefined while the run goes on. The one stop rule. */
export type Halt = 'aborted' | 'blocked' | undefined;

export function halt(schedule: Schedule<unknown, unknown>): Halt {
  if (schedule.interrupted) return 'aborted';
  if (schedule.failed && !schedule.keepGoing) return 'blocked';
  return undefined;
}

function makeNode<S, L>(entry: NodeEntry<S, L>): ScheduleNode<S, L> {
  const base = { id: entry.id, deps: [...entry.deps], dependents: [], waiting: 0 };
  return entry.kind === 'stage'
    ? { ...base, kind: 'stage', stage: entry.stage }
    : { ...base, kind: 'loop', loop: entry.loop, iteration: 0, members: [], current: [], pending: undefined };
}

/** A schedule of the given nodes; dependencies naming no entry are dropped (not selected). */
export function createSchedule<S, L>(entries: ReadonlyArray<NodeEntry<S, L>>, options: { keepGoing: boolean }): Schedule<S, L> {
  const nodes = new Map<string, ScheduleNode<S, L>>();
  for (const entry of entries) nodes.set(entry.id, makeNode(entry));
  for (const node of nodes.values()) {
    node.deps = node.deps.filter((d) => nodes.has(d));
    node.waiting = node.deps.length;
    for (const d of node.deps) nodes.get(d)?.dependents.push(node.id);
  }
  return { nodes, keepGoing: options.keepGoing, unsettled: nodes.size, running: 0, failed: false, interrupted: false };
}

/**
 * Adds stages to a running schedule (a loop's next iteration) and returns their nodes. Their
 * dependencies are in the schedule already or among the entries; settled ones count as done.
 */
export function addStages<S, L>(schedule: Schedule<S, L>, entries: ReadonlyArray<StageEntry<S>>): Array<StageNode<S>> {
  const added: Array<StageNode<S>> = entries.map((e) => ({
    kind: 'stage',
    id: e.id,
    deps: [...e.deps],
    dependents: [],
    waiting: 0,
    stage: e.stage,
  }));
  for (const node of added) schedule.nodes.set(node.id, node);
  schedule.unsettled += added.length;
  for (const node of added) {
    node.waiting = node.deps.filter((d) => schedule.nodes.get(d)?.status === undefined).length;
    for (const d of node.deps) schedule.nodes.get(d)?.dependents.push(node.id);
  }
  return added;
}

/**
 * Nodes outside `select` count as done already (up to date with what the last run recorded).
 * Returns the ids of the stages settled so.
 */
export function settleOutside<S, L>(schedule: Schedule<S, L>, select: ReadonlySet<string>): string[] {
  const stages: string[] = [];
  for (const node of schedule.nodes.values()) {
    if (select.has(node.id)) continue;
    node.status = 'fresh';
    schedule.unsettled -= 1;
    if (node.kind === 'stage') stages.push(node.id);
  }
  for (const node of schedule.nodes.values()) node.waiting = node.deps.filter((d) => schedule.nodes.get(d)?.status === undefined).length;
  return stages;
}

/** Unsettled nodes with nothing to wait for, in schedule order. */
export function readyNodes<S, L>(schedule: Schedule<S, L>): string[] {
  const ready: string[] = [];
  for (const node of schedule.nodes.values()) if (node.status === undefined && node.waiting === 0) ready.push(node.id);
  return ready;
}

/** The first dependency that failed or did not run: the node cannot run either. */
export function blockingDependency<S, L>(schedule: Schedule<S, L>, node: ScheduleNode<S, L>): ScheduleNode<S, L> | undefined {
  for (const d of node.deps) {
    const dep = schedule.nodes.get(d);
    if (dep && (dep.status === 'failed' || dep.status === 'blocked' || dep.status === 'aborted')) return dep;
  }
  return undefined;
}

/** Records how a node ended; returns the dependents that have nothing left to wait for. */
export function settle<S, L>(schedule: Schedule<S, L>, node: ScheduleNode<S, L>, status: StageStatus): string[] {
  node.status = status;
  schedule.unsettled -= 1;
  if (status === 'failed') schedule.failed = true;
  const ready: string[] = [];
  for (const id of node.dependents) {
    const dependent = schedule.nodes.get(id) as ScheduleNode<S, L>;
    dependent.waiting -= 1;
    if (dependent.waiting === 0) ready.push(id);
  }
  return ready;
}

/**
 * What to do when no stage is running: `done` when every node has settled, `sweep` when the
 * run stopped with nodes left (they end blocked or aborted), else `wait` (more will be ready).
 */
export function idleState(schedule: Schedule<unknown, unknown>): 'running' | 'done' | 'sweep' | 'wait' {
  if (schedule.running > 0) return 'running';
  if (schedule.unsettled === 0) return 'done';
  return halt(schedule) ? 'sweep' : 'wait';
}

/** Nodes that have not settled, in schedule order (a snapshot). */
export function unsettledNodes<S, L>(schedule: Schedule<S, L>): Array<ScheduleNode<S, L>> {
  return [...schedule.nodes.values()].filter((n) => n.status === undefined);
}

/** The dependencies that were skipped (their `when` was false): they wrote nothing. */
export function skippedDependencies<S, L>(schedule: Schedule<S, L>, node: ScheduleNode<S, L>): string[] {
  return node.deps.filter((d) => schedule.nodes.get(d)?.status === 'skipped');
}
