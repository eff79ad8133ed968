import { describe, expect, it } from 'vitest';
import { commandLookahead, waitingJobs } from '../../../src/engine/executor/stage-context.ts';
import type { Plan, StageInstance } from '../../../src/engine/types/plan.ts';

type Spec = Partial<StageInstance['spec']>;

function plan(count: number, spec: (i: number) => Spec = () => ({ kind: 'run' }), pools: Record<string, number> = {}): Plan {
  return {
    pipeline: { name: 'p', pools } as Plan['pipeline'],
    root: '/x',
    params: {},
    vars: {},
    instances: Array.from({ length: count }, (_, i) => ({
      id: `s${i}`,
      stageId: `s${i}`,
      spec: spec(i) as StageInstance['spec'],
      vars: {},
      inputs: [],
      outputs: {},
      needs: [],
    })),
    loops: [],
  };
}

describe('commandLookahead', () => {
  it('commandLookahead - a build of run: stages keeps -j through the jobserver, however few', () => {
    expect(commandLookahead(plan(2), 2)).toBe(2);
    expect(commandLookahead(plan(40), 2)).toBe(2);
    expect(commandLookahead(plan(1000), 8)).toBe(8);
  });

  it.each([
    ['one command (spawned directly)', plan(1)],
    ['a task stage among them', plan(60, (i) => ({ kind: i === 7 ? 'task' : 'run' }))],
    ['a named pool', plan(60, () => ({ kind: 'run' }), { llm: 2 })],
    ['a stage with a timeout', plan(60, (i) => ({ kind: 'run', ...(i === 3 ? { timeoutMs: 1000 } : {}) }))],
  ])('commandLookahead - off with %s', (_, p) => {
    expect(commandLookahead(p as Plan, 2)).toBeUndefined();
  });

  it('commandLookahead - off where the plan has a loop', () => {
    const p = plan(60);
    expect(commandLookahead({ ...p, loops: [{ id: 'rounds', spec: {} as never, max: 2, needs: [] }] }, 2)).toBeUndefined();
  });

  it('waitingJobs - one waiting job per slot, at most four', () => {
    expect([1, 2, 4, 16].map(waitingJobs)).toEqual([1, 2, 4, 4]);
  });
});
