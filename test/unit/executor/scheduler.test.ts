import { describe, expect, it } from 'vitest';
import {
  addStages,
  blockingDependency,
  createSchedule,
  halt,
  idleState,
  readyNodes,
  settle,
  settleOutside,
  skippedDependencies,
  unsettledNodes,
  type NodeEntry,
  type Schedule,
} from '../../../src/engine/executor/scheduler.ts';
import { onlySelection } from '../../../src/engine/executor/selection.ts';

/** A schedule from an adjacency literal: id -> the ids it needs; an id ending in '*' is a loop gate. */
function scheduleOf(adjacency: Record<string, string[]>, keepGoing = false): Schedule<string, string> {
  const entries: Array<NodeEntry<string, string>> = Object.entries(adjacency).map(([id, deps]) =>
    id.endsWith('*') ? { kind: 'loop', id, deps, loop: id } : { kind: 'stage', id, deps, stage: id },
  );
  return createSchedule(entries, { keepGoing });
}

function node(schedule: Schedule<string, string>, id: string) {
  const found = schedule.nodes.get(id);
  if (!found) throw new Error(`no node ${id}`);
  return found;
}

/** Settles every ready node as `status`, in ready order, until none is left; returns the order. */
function drain(schedule: Schedule<string, string>, status: 'succeeded' = 'succeeded'): string[] {
  const order: string[] = [];
  const work = readyNodes(schedule);
  while (work.length > 0) {
    const id = work.shift() as string;
    order.push(id);
    work.push(...settle(schedule, node(schedule, id), status));
  }
  return order;
}

describe('scheduler', () => {
  it('createSchedule - nodes that need nothing are ready; a need naming no node is dropped', () => {
    const s = scheduleOf({ a: [], b: ['a', 'not-selected'], c: [] });
    expect(readyNodes(s)).toEqual(['a', 'c']);
    expect(node(s, 'b').deps).toEqual(['a']);
    expect(node(s, 'a').dependents).toEqual(['b']);
    expect(s.unsettled).toBe(3);
  });

  it('settle - a node is ready only once its last dependency has settled (diamond)', () => {
    const s = scheduleOf({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] });
    expect(settle(s, node(s, 'a'), 'succeeded')).toEqual(['b', 'c']);
    expect(settle(s, node(s, 'b'), 'succeeded')).toEqual([]);
    expect(settle(s, node(s, 'c'), 'fresh')).toEqual(['d']);
    expect(s.unsettled).toBe(1);
  });

  it('settle - every node settles after everything it needs, each exactly once', () => {
    const adjacency = { e: ['d', 'b'], a: [], d: ['c'], b: ['a'], c: ['a', 'b'], f: [] };
    const s = scheduleOf(adjacency);
    const order = drain(s);
    expect([...order].sort()).toEqual(Object.keys(adjacency).sort());
    for (const [id, deps] of Object.entries(adjacency)) for (const d of deps) expect(order.indexOf(d)).toBeLessThan(order.indexOf(id));
    expect(idleState(s)).toBe('done');
  });

  it('halt - the one stop rule: an interruption aborts; a failure blocks unless keepGoing', () => {
    const s = scheduleOf({ a: [], b: [] });
    expect(halt(s)).toBeUndefined();
    settle(s, node(s, 'a'), 'failed');
    expect(s.failed).toBe(true);
    expect(halt(s)).toBe('blocked');
    const kept = scheduleOf({ a: [], b: [] }, true);
    settle(kept, node(kept, 'a'), 'failed');
    expect(halt(kept)).toBeUndefined();
    kept.interrupted = true;
    expect(halt(kept)).toBe('aborted');
  });

  it('blockingDependency - a failed, blocked or aborted dependency blocks; succeeded, fresh and skipped do not', () => {
    for (const status of ['failed', 'blocked', 'aborted'] as const) {
      const s = scheduleOf({ a: [], b: [], c: ['a', 'b'] }, true);
      settle(s, node(s, 'a'), 'succeeded');
      settle(s, node(s, 'b'), status);
      expect(blockingDependency(s, node(s, 'c'))?.id, status).toBe('b');
    }
    for (const status of ['succeeded', 'fresh', 'skipped'] as const) {
      const s = scheduleOf({ a: [], c: ['a'] });
      settle(s, node(s, 'a'), status);
      expect(blockingDependency(s, node(s, 'c')), status).toBeUndefined();
    }
  });

  it('skippedDependencies - the dependencies that were skipped, not those that ran or failed', () => {
    const s = scheduleOf({ a: [], b: [], c: [], d: ['a', 'b', 'c'] }, true);
    settle(s, node(s, 'a'), 'succeeded');
    settle(s, node(s, 'b'), 'skipped');
    settle(s, node(s, 'c'), 'failed');
    expect(skippedDependencies(s, node(s, 'd'))).toEqual(['b']);
  });

  it('settleOutside - nodes outside the selection are up to date; selected ones wait only for selected ones', () => {
    const s = scheduleOf({ a: [], b: ['a'], c: ['b'], 'l*': ['a'] });
    const stages = settleOutside(s, new Set(['c']));
    expect(stages).toEqual(['a', 'b']);
    expect(node(s, 'b').status).toBe('fresh');
    expect(node(s, 'l*').status).toBe('fresh');
    expect(readyNodes(s)).toEqual(['c']);
    expect(s.unsettled).toBe(1);
  });

  it('idleState - running while a stage runs; sweep once stopped with nodes left; wait while more can be ready', () => {
    const s = scheduleOf({ a: [], b: ['a'], c: [] });
    s.running = 1;
    expect(idleState(s)).toBe('running');
    s.running = 0;
    expect(idleState(s)).toBe('wait');
    settle(s, node(s, 'a'), 'failed');
    expect(idleState(s)).toBe('sweep');
    expect(unsettledNodes(s).map((n) => n.id)).toEqual(['b', 'c']);
  });

  it('addStages - a stage added while running waits only for dependencies not settled, and becomes their dependent', () => {
    const s = scheduleOf({ a: [], b: [] });
    settle(s, node(s, 'a'), 'succeeded');
    const added = addStages(s, [
      { kind: 'stage', id: 'x', deps: ['a', 'b'], stage: 'x' },
      { kind: 'stage', id: 'y', deps: ['x'], stage: 'y' },
    ]);
    expect(added.map((n) => [n.id, n.waiting])).toEqual([
      ['x', 1],
      ['y', 1],
    ]);
    expect(node(s, 'b').dependents).toEqual(['x']);
    expect(settle(s, node(s, 'b'), 'succeeded')).toEqual(['x']);
    expect(s.unsettled).toBe(2);
  });
});

describe('selection', () => {
  const deps = new Map<string, string[]>([
    ['fetch', []],
    ['turn[1]', ['fetch']],
    ['turn[2]', ['fetch']],
    ['report', ['turn[1]', 'turn[2]']],
    ['lint', []],
  ]);
  const stageOf = (id: string): string => id.replace(/\[.*$/, '');

  it('onlySelection - a name selects its instances and everything upstream of them', () => {
    expect(onlySelection(deps, ['turn'], stageOf)).toEqual(new Set(['turn[1]', 'turn[2]', 'fetch']));
    expect(onlySelection(deps, ['turn[2]'], () => undefined)).toEqual(new Set(['turn[2]', 'fetch']));
    expect(onlySelection(deps, ['report', 'lint'], stageOf)).toEqual(new Set(['report', 'turn[1]', 'turn[2]', 'fetch', 'lint']));
  });

  it('onlySelection - a name that matches nothing selects nothing', () => {
    expect(onlySelection(deps, ['ghost'], stageOf)).toBeUndefined();
  });
});
