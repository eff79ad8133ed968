import { describe, expect, it } from 'vitest';
import { depths, foldGraph, groupOf, type FoldInput } from '../../../src/ui/data/graph-fold.ts';

describe('dashboard graph folding', () => {
  it('graph-fold - foreach instances fold into one node with counts; the worst state shows', () => {
    const items: FoldInput[] = [
      { id: 'prep', needs: [], kind: 'stage', state: 'up-to-date' },
      { id: 'turn[a/1]', needs: ['prep'], kind: 'stage', state: 'up-to-date' },
      { id: 'turn[a/2]', needs: ['prep'], kind: 'stage', state: 'failed' },
      { id: 'turn[b/1]', needs: ['prep'], kind: 'stage', state: 'stale' },
      { id: 'report', needs: ['turn[a/1]', 'turn[a/2]', 'turn[b/1]'], kind: 'stage', state: 'never-run' },
    ];
    const g = foldGraph(items);
    expect(g.layered).toBe(false);
    expect(g.nodes.map((n) => [n.id, n.kind, n.size, n.state])).toEqual([
      ['prep', 'stage', 1, 'up-to-date'],
      ['turn', 'foreach', 3, 'failed'],
      ['report', 'stage', 1, 'never-run'],
    ]);
    expect(g.nodes[1]?.counts).toEqual({ 'up-to-date': 1, failed: 1, stale: 1 });
    expect(g.edges).toEqual([
      ['prep', 'turn'],
      ['turn', 'report'],
    ]);
  });

  it('graph-fold - a loop is one group counting its iterations stages', () => {
    expect(groupOf('rounds#2.evaluate[judge-a]')).toBe('rounds');
    const g = foldGraph([
      { id: 'criteria', needs: [], kind: 'stage', state: 'up-to-date' },
      { id: 'rounds', needs: ['criteria'], kind: 'loop', state: 'never-run', members: ['evaluate', 'consensus'] },
      { id: 'rounds#1.evaluate[a]', needs: [], kind: 'stage', state: 'up-to-date' },
      { id: 'rounds#1.consensus', needs: [], kind: 'stage', state: 'running' },
    ]);
    const loop = g.nodes.find((n) => n.id === 'rounds');
    expect(loop).toMatchObject({ kind: 'loop', size: 2, state: 'running', members: ['evaluate', 'consensus'] });
  });

  it('graph-fold - past the node budget, depth layers fold into one box each', () => {
    const items: FoldInput[] = Array.from({ length: 1000 }, (_, i) => ({
      id: `s${i}`,
      needs: i === 0 ? [] : [`s${Math.floor((i - 1) / 2)}`],
      kind: 'stage' as const,
      state: i % 7 === 0 ? ('failed' as const) : ('up-to-date' as const),
    }));
    const g = foldGraph(items, 50);
    expect(g.layered).toBe(true);
    expect(g.nodes.length).toBeLessThanOrEqual(50);
    expect(g.nodes.reduce((n, x) => n + x.size, 0)).toBe(1000);
    expect(g.nodes[0]?.label).toBe('depth 0');
    // A binary tree of 1,000 nodes is 10 deep: 10 boxes, each edge from one depth to the next.
    expect(g.nodes).toHaveLength(10);
    expect(g.edges).toHaveLength(9);
  });

  it('graph-fold - depths are longest paths', () => {
    expect(
      Object.fromEntries(
        depths(
          ['a', 'b', 'c', 'd'],
          [
            ['a', 'b'],
            ['b', 'c'],
            ['a', 'c'],
            ['c', 'd'],
          ],
        ),
      ),
    ).toEqual({ a: 0, b: 1, c: 2, d: 3 });
  });
});
