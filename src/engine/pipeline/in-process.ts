import type { Plan } from '../types/plan.ts';

/**
 * Whether a plan runs anything in refinery's own process: a `task:` stage or a loop (whose
 * iterations may hold one). A plan of `run:` stages only starts other programs.
 */
export function runsInProcess(plan: Plan): boolean {
  return plan.loops.length > 0 || plan.instances.some((i) => i.spec.kind !== 'run');
}
