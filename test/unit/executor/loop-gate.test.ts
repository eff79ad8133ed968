import { describe, expect, it } from 'vitest';
import {
  beginIteration,
  loopOutputs,
  iterationDeps,
  iterationOutcome,
  loopDecision,
  memberSettled,
  untilHolds,
} from '../../../src/engine/executor/loop-gate.ts';
import { createSchedule, settle, type LoopGate, type Schedule, type StageNode } from '../../../src/engine/executor/scheduler.ts';
import { lazyRecord } from '../../../src/engine/expr/evaluate.ts';
import { parseCondition } from '../../../src/engine/expr/template.ts';
import type { LoopInstance } from '../../../src/engine/types/plan.ts';

const member = (id: string, opts: { needs?: string[]; inputs?: string[]; outputs?: string[] } = {}) => ({
  id,
  needs: opts.needs ?? [],
  inputs: opts.inputs ?? [],
  outputs: opts.outputs ?? [],
});

/** `seed` and `other` before a loop gate `rounds` that needs `seed`. */
function withGate(): { schedule: Schedule<string, string>; gate: LoopGate<string, string> } {
  const schedule = createSchedule<string, string>(
    [
      { kind: 'stage', id: 'seed', deps: [], stage: 'seed' },
      { kind: 'stage', id: 'other', deps: [], stage: 'other' },
      { kind: 'loop', id: 'rounds', deps: ['seed'], loop: 'rounds' },
    ],
    { keepGoing: false },
  );
  const gate = schedule.nodes.get('rounds');
  if (gate?.kind !== 'loop') throw new Error('no gate');
  return { schedule, gate };
}

function stage(schedule: Schedule<string, string>, id: string): StageNode<string> {
  const n = schedule.nodes.get(id);
  if (n?.kind !== 'stage') throw new Error(`no stage ${id}`);
  return n;
}

describe('loop gate', () => {
  it('iterationDeps - edges among an iteration by needs and by paths; needs outside the loop kept when known', () => {
    const deps = iterationDeps(
      [
        member('r#1.draft', { outputs: ['out/1/draft.md'] }),
        member('r#1.judge', { inputs: ['out/1/*.md'], needs: ['seed', 'ghost'] }),
        member('r#1.merge', { needs: ['r#1.judge'] }),
      ],
      (id) => id === 'seed',
    );
    expect(Object.fromEntries(deps)).toEqual({ 'r#1.draft': [], 'r#1.judge': ['r#1.draft', 'seed'], 'r#1.merge': ['r#1.judge'] });
  });

  it('beginIteration - adds the iteration as the current members and returns those ready; the gate learns when the last settles', () => {
    const { schedule, gate } = withGate();
    settle(schedule, stage(schedule, 'seed'), 'succeeded');
    const ready = beginIteration(schedule, gate, 1, [
      { kind: 'stage', id: 'r#1.a', deps: ['seed'], stage: 'a' },
      { kind: 'stage', id: 'r#1.b', deps: ['r#1.a', 'other'], stage: 'b' },
    ]);
    expect(ready).toEqual(['r#1.a']);
    expect(gate).toMatchObject({ iteration: 1, pending: 2 });
    expect(gate.current.map((n) => n.id)).toEqual(['r#1.a', 'r#1.b']);
    settle(schedule, stage(schedule, 'r#1.a'), 'succeeded');
    expect(memberSettled(gate)).toBe(false);
    settle(schedule, stage(schedule, 'other'), 'succeeded');
    settle(schedule, stage(schedule, 'r#1.b'), 'succeeded');
    expect(memberSettled(gate)).toBe(true);
    beginIteration(schedule, gate, 2, [{ kind: 'stage', id: 'r#2.a', deps: ['r#1.b'], stage: 'a' }]);
    expect(gate.members.map((n) => n.id)).toEqual(['r#1.a', 'r#1.b', 'r#2.a']);
    expect(gate.current.map((n) => n.id)).toEqual(['r#2.a']);
  });

  it('memberSettled - a gate that has settled already (the run stopped) takes no more notice', () => {
    const { schedule, gate } = withGate();
    beginIteration(schedule, gate, 1, [{ kind: 'stage', id: 'r#1.a', deps: [], stage: 'a' }]);
    settle(schedule, gate, 'aborted');
    expect(memberSettled(gate)).toBe(false);
  });

  it('iterationOutcome - passed when each stage succeeded, was up to date or skipped; aborted before blocked', () => {
    expect(iterationOutcome(['succeeded', 'fresh', 'skipped'])).toBe('passed');
    expect(iterationOutcome([])).toBe('passed');
    expect(iterationOutcome(['succeeded', 'failed'])).toBe('blocked');
    expect(iterationOutcome(['blocked', 'aborted'])).toBe('aborted');
  });

  it('loopDecision - done when until holds, max-reached at max, else continue', () => {
    expect(loopDecision(true, 5, 5)).toBe('done');
    expect(loopDecision(false, 5, 5)).toBe('max-reached');
    expect(loopDecision(false, 2, 5)).toBe('continue');
  });

  it('untilHolds - evaluated over the iteration and its artifacts; an evaluation error is a problem naming the loop', () => {
    const loop = (until?: string): LoopInstance => ({
      id: 'rounds',
      needs: [],
      max: 3,
      spec: { kind: 'loop', id: 'rounds', needs: [], max: 3, stages: [], ...(until ? { until: parseCondition(until) } : {}) },
    });
    const vars = {
      params: { target: 2 },
      vars: {},
      pipeline: 'p',
      artifacts: lazyRecord((s) => (s === 'step' ? { value: 2 } : undefined)),
    };
    expect(untilHolds(loop('artifacts.step.value >= params.target && loop.round == "002"'), 2, vars)).toEqual({ holds: true });
    expect(untilHolds(loop('artifacts.step.value > params.target'), 2, vars)).toEqual({ holds: false });
    expect(untilHolds(loop(), 1, vars)).toEqual({ holds: false });
    expect(untilHolds(loop("pad('x', 100000000) == 'x'"), 1, vars)).toEqual({ problem: expect.stringMatching(/^loop 'rounds' until: /) });
  });

  it('loopOutputs - changes with what any member wrote', () => {
    expect(loopOutputs(['a', 'b'])).toBe(loopOutputs(['a', 'b']));
    expect(loopOutputs(['a', 'b'])).not.toBe(loopOutputs(['a', 'c']));
    expect(loopOutputs(['a', 'skipped'])).not.toBe(loopOutputs(['a', 'b']));
  });
});
