import { describe, expect, it } from 'vitest';
import { buildGraph } from '../../../src/engine/graph/graph.ts';
import { selectStages } from '../../../src/engine/graph/select.ts';

// a -> b -> c -> d, a -> x, turn[1] and turn[2] after d
const nodes = [
  { id: 'a', needs: [] },
  { id: 'b', needs: ['a'] },
  { id: 'c', needs: ['b'] },
  { id: 'd', needs: ['c'] },
  { id: 'x', needs: ['a'] },
  { id: 'turn[1]', needs: ['d'] },
  { id: 'turn[2]', needs: ['d'] },
].map((n) => ({ ...n, inputs: [], outputs: [] }));
const graph = buildGraph(nodes);
const select = { ids: nodes.map((n) => n.id), deps: graph.deps, dependents: graph.dependents };
const states: Record<string, string> = {
  a: 'up-to-date',
  b: 'failed',
  c: 'blocked',
  d: 'blocked',
  x: 'up-to-date',
  'turn[1]': 'never-run',
  'turn[2]': 'failed',
};
const run = (q: string): string[] | string => {
  const r = selectStages(q, select, (id) => states[id]);
  return r.ok ? [...r.ids].sort() : r.error;
};

describe('stage selection language', () => {
  it('select - names, stage names of foreach instances and globs', () => {
    expect(run('b')).toEqual(['b']);
    expect(run('turn')).toEqual(['turn[1]', 'turn[2]']);
    expect(run('t*')).toEqual(['turn[1]', 'turn[2]']);
    expect(run('')).toEqual(select.ids.slice().sort());
  });

  it('select - +s is s and everything upstream, s+ everything downstream, N limits the depth', () => {
    expect(run('+c')).toEqual(['a', 'b', 'c']);
    expect(run('1+c')).toEqual(['b', 'c']);
    expect(run('b+')).toEqual(['b', 'c', 'd', 'turn[1]', 'turn[2]']);
    expect(run('b+1')).toEqual(['b', 'c']);
  });

  it('select - a+ and +b is the path from a to b; or, not and status: combine', () => {
    expect(run('b+ and +d')).toEqual(['b', 'c', 'd']);
    expect(run('status:failed')).toEqual(['b', 'turn[2]']);
    expect(run('status:failed or x')).toEqual(['b', 'turn[2]', 'x']);
    expect(run('a+ and not status:blocked')).toEqual(['a', 'b', 'turn[1]', 'turn[2]', 'x']);
  });

  it('select - a malformed query is an error naming the problem', () => {
    expect(run('and b')).toMatch(/needs a term before/);
    expect(run('b c')).toMatch(/missing 'and' or 'or'/);
    expect(run('b and')).toMatch(/ends with an operator/);
    expect(run('nosuch')).toMatch(/no stage matches 'nosuch'/);
  });
});
