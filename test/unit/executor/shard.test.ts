import { describe, expect, it } from 'vitest';
import { parseShard, shardMembers, unsharded } from '../../../src/engine/executor/shard.ts';
import type { Plan } from '../../../src/engine/types/plan.ts';

function plan(instances: string[], loops: string[] = [], needs: Record<string, string[]> = {}): Plan {
  return {
    pipeline: { name: 'p' } as Plan['pipeline'],
    root: '/x',
    params: {},
    vars: {},
    instances: instances.map((id) => ({
      id,
      stageId: id.replace(/\[.*$/, ''),
      spec: {} as never,
      vars: {},
      inputs: [],
      outputs: {},
      needs: needs[id] ?? [],
    })),
    loops: loops.map((id) => ({ id, spec: {} as never, max: 1, needs: [] })),
  };
}

describe('shards', () => {
  it.each([
    ['1/3', { index: 1, count: 3 }],
    [' 3/3 ', { index: 3, count: 3 }],
    ['1/1', { index: 1, count: 1 }],
  ])('parse - %j', (text, shard) => {
    expect(parseShard(text)).toEqual(shard);
  });

  it.each(['0/3', '4/3', '1/0', 'a/b', '1-3', '1/', '/3', '1/1001'])('parse - %j is refused with the expected form', (text) => {
    expect(parseShard(text)).toEqual({ error: expect.stringContaining('--shard') });
  });

  it('members - the N shares are disjoint, cover every instance and loop once, and spread a foreach evenly', () => {
    const ids = ['a', ...Array.from({ length: 10 }, (_, i) => `turn[t${i}]`), 'summary'];
    const p = plan(ids, ['rounds']);
    const shares = [1, 2, 3].map((index) => shardMembers(p, { index, count: 3 }));
    expect(shares.flat().sort()).toEqual([...ids, 'rounds'].sort());
    expect(new Set(shares.flat()).size).toBe(ids.length + 1);
    const turns = shares.map((s) => s.filter((id) => id.startsWith('turn[')).length);
    expect(Math.max(...turns) - Math.min(...turns)).toBeLessThanOrEqual(1);
  });

  it('members - a chain stays in one share; a fan-in across shares is in none and is left to the unsharded run', () => {
    const turns = Array.from({ length: 6 }, (_, i) => `turn[t${i}]`);
    const p = plan([...turns, 'report[t0]', 'summary'], [], { 'report[t0]': ['turn[t0]'], summary: turns });
    const shares = [1, 2, 3].map((index) => shardMembers(p, { index, count: 3 }));
    expect(shares.map((s) => s.filter((id) => id.startsWith('turn[')).length)).toEqual([2, 2, 2]);
    expect(shares.find((s) => s.includes('turn[t0]'))).toContain('report[t0]');
    expect(shares.flat()).not.toContain('summary');
    expect(unsharded(p, 3)).toEqual(['summary']);
    expect(unsharded(p, 1)).toEqual([]);
  });

  it('members - deterministic: the same plan gives the same share every time; more shards than stages leaves some empty', () => {
    const p = plan(['x', 'y']);
    expect(shardMembers(p, { index: 2, count: 2 })).toEqual(shardMembers(plan(['x', 'y']), { index: 2, count: 2 }));
    expect(shardMembers(p, { index: 3, count: 4 })).toEqual([]);
  });
});
