import { describe, expect, it } from 'vitest';
import { buildGraph, downstreamOf, findCycle, topologicalOrder, upstreamOf } from '../../../src/engine/graph/graph.ts';
import { toMermaid } from '../../../src/engine/graph/render.ts';
import { matchGlob, staticPrefix } from '../../../src/engine/paths/glob.ts';

const node = (id: string, opts: { needs?: string[]; inputs?: string[]; outputs?: string[] } = {}) => ({
  id,
  needs: opts.needs ?? [],
  inputs: opts.inputs ?? [],
  outputs: opts.outputs ?? [],
});

describe('graph', () => {
  it('buildGraph - explicit needs and edges implied by paths and globs', () => {
    const g = buildGraph([
      node('a', { outputs: ['out/a.txt'] }),
      node('b', { inputs: ['out/a.txt'] }),
      node('c', { inputs: ['out/*.txt'], needs: ['b'] }),
      node('d', { inputs: ['src/unrelated'] }),
    ]);
    expect(g.deps.get('b')).toEqual(['a']);
    expect(g.deps.get('c')).toEqual(['a', 'b']);
    expect(g.deps.get('d')).toEqual([]);
    expect(g.dependents.get('a')).toEqual(['b', 'c']);
  });

  it('buildGraph - a stage reading its own output is not its own dependency', () => {
    const g = buildGraph([node('a', { inputs: ['out/**'], outputs: ['out/a'] })]);
    expect(g.deps.get('a')).toEqual([]);
  });

  it('buildGraph - a glob over its own outputs still finds another stage writing beside them', () => {
    const g = buildGraph([
      node('turn', { inputs: ['logs/t1/**'], outputs: ['logs/t1/analysis.json', 'logs/t1/.hidden'] }),
      node('other', { outputs: ['logs/t1/extra.txt', 'logs/t1/.dot'] }),
      node('hidden', { outputs: ['logs/t1/.only-dot'] }),
    ]);
    expect(g.deps.get('turn')).toEqual(['other']);
    // A wildcard does not reach a dot-name, whoever writes it.
    expect(g.dependents.get('hidden')).toEqual([]);
  });

  it('buildGraph - unknown needs are returned, not thrown', () => {
    expect(buildGraph([node('a', { needs: ['ghost'] })]).missing).toEqual([{ from: 'a', need: 'ghost' }]);
  });

  it('findCycle - reports the full cycle path', () => {
    const deps = new Map([
      ['a', ['c']],
      ['b', ['a']],
      ['c', ['b']],
      ['d', []],
    ]);
    const cycle = findCycle(deps) as string[];
    expect(cycle[0]).toBe(cycle[cycle.length - 1]);
    expect(new Set(cycle)).toEqual(new Set(['a', 'b', 'c']));
    expect(cycle).toHaveLength(4);
    expect(
      findCycle(
        new Map([
          ['a', []],
          ['b', ['a']],
        ]),
      ),
    ).toBeUndefined();
  });

  it('findCycle - a self-edge is a cycle', () => {
    expect(findCycle(new Map([['a', ['a']]]))).toEqual(['a', 'a']);
  });

  it('topologicalOrder - dependencies first, deterministic', () => {
    const deps = new Map([
      ['z', []],
      ['y', ['z']],
      ['a', ['y', 'z']],
      ['b', []],
    ]);
    const order = topologicalOrder(deps);
    expect(order).toEqual(['b', 'z', 'y', 'a']);
    expect(topologicalOrder(new Map([...deps].reverse()))).toEqual(order);
  });

  it('downstreamOf and upstreamOf - transitive closures', () => {
    const g = buildGraph([node('a'), node('b', { needs: ['a'] }), node('c', { needs: ['b'] }), node('d')]);
    expect([...downstreamOf(['a'], g.dependents)].sort()).toEqual(['a', 'b', 'c']);
    expect([...upstreamOf(['c'], g.deps)].sort()).toEqual(['a', 'b', 'c']);
  });

  it('topologicalOrder - 10,000 nodes in a chain stay fast', () => {
    const deps = new Map<string, string[]>();
    for (let i = 0; i < 10_000; i += 1) deps.set(`s${i}`, i ? [`s${i - 1}`] : []);
    const order = topologicalOrder(deps);
    expect(order[0]).toBe('s0');
    expect(order[9999]).toBe('s9999');
  });

  it('toMermaid - nodes and edges', () => {
    const text = toMermaid({
      nodes: [
        { id: 'a', label: 'a', kind: 'run' },
        { id: 'b', label: 'b "x"', kind: 'task' },
      ],
      edges: [['a', 'b']],
    });
    expect(text).toBe('flowchart LR\n  n0["a"]\n  n1("b #quot;x#quot;")\n  n0 --> n1\n');
  });
});

describe('glob', () => {
  it('matchGlob - stars, globstars, classes and braces', () => {
    expect(matchGlob('logs/*/turn_*', 'logs/log_1/turn_2')).toBe(true);
    expect(matchGlob('logs/*/turn_*', 'logs/a/b/turn_2')).toBe(false);
    expect(matchGlob('logs/**/status.json', 'logs/status.json')).toBe(true);
    expect(matchGlob('logs/**/status.json', 'logs/a/b/status.json')).toBe(true);
    expect(matchGlob('src/*.{ts,js}', 'src/a.js')).toBe(true);
    expect(matchGlob('file[0-9].txt', 'file5.txt')).toBe(true);
    expect(matchGlob('a.b', 'axb')).toBe(false);
  });

  it('staticPrefix - the directories before the first glob segment', () => {
    expect(staticPrefix('examples/logs/*/turn_*')).toBe('examples/logs');
    expect(staticPrefix('*.md')).toBe('');
    expect(staticPrefix('a/b.txt')).toBe('a/b.txt');
  });
});
