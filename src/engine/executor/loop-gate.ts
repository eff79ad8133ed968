import type { LoopEvent, StageStatus } from '../types/events.ts';
import type { LoopInstance } from '../types/plan.ts';
import { evaluateCondition, ExprEvalError, type LazyRecord } from '../expr/evaluate.ts';
import { buildGraph, type GraphNode } from '../graph/graph.ts';
import { digest } from '../state/hash-file.ts';
import { addStages, type LoopGate, type Schedule, type StageEntry } from './scheduler.ts';

/**
 * Loops: a gate node in the schedule expands one iteration at a time, iteration N+1 needing
 * all of iteration N, and settles when `until` holds or `max` is reached. Pure but for the
 * `until` expression, which reads artifacts through the record it is given.
 */

/**
 * Dependencies of an iteration's stages: edges among them (needs and paths), and needs of
 * stages outside the loop that `known` has. The ids of an iteration are its own.
 */
export function iterationDeps(members: readonly GraphNode[], known: (id: string) => boolean): Map<string, string[]> {
  const own = new Set(members.map((m) => m.id));
  const graph = buildGraph(members.map((m) => ({ ...m, needs: m.needs.filter((n) => own.has(n)) })));
  return new Map(members.map((m) => [m.id, [...(graph.deps.get(m.id) ?? []), ...m.needs.filter((n) => !own.has(n) && known(n))]]));
}

/** Adds an iteration's stages to the schedule as the gate's current ones; returns the ids of those ready. */
export function beginIteration<S, L>(
  schedule: Schedule<S, L>,
  gate: LoopGate<S, L>,
  iteration: number,
  entries: ReadonlyArray<StageEntry<S>>,
): string[] {
  gate.iteration = iteration;
  gate.current = addStages(schedule, entries);
  gate.members.push(...gate.current);
  gate.pending = entries.length;
  return gate.current.filter((n) => n.waiting === 0).map((n) => n.id);
}

/**
 * One stage of the gate's current iteration has settled; returns true when it was the last.
 * A gate settled already (the run stopped) takes no more notice.
 */
export function memberSettled(gate: LoopGate<unknown, unknown>): boolean {
  if (gate.status !== undefined || gate.pending === undefined) return false;
  gate.pending -= 1;
  return gate.pending === 0;
}

/** How an iteration went: on only when each of its stages succeeded, was up to date or was skipped. */
export function iterationOutcome(statuses: ReadonlyArray<StageStatus | undefined>): 'passed' | 'blocked' | 'aborted' {
  const passed = (s: StageStatus | undefined): boolean => s === 'succeeded' || s === 'fresh' || s === 'skipped';
  if (statuses.every(passed)) return 'passed';
  return statuses.includes('aborted') ? 'aborted' : 'blocked';
}

export function loopDecision(untilHolds: boolean, iteration: number, max: number): LoopEvent['decision'] {
  if (untilHolds) return 'done';
  return iteration >= max ? 'max-reached' : 'continue';
}

/** The loop's `until` over the iteration's artifacts: whether it holds, or the problem evaluating it. */
export function untilHolds(
  loop: LoopInstance,
  iteration: number,
  vars: { params: Record<string, unknown>; vars: Record<string, unknown>; pipeline: string; artifacts: LazyRecord },
): { holds: boolean } | { problem: string } {
  if (!loop.spec.until) return { holds: false };
  try {
    return {
      holds: evaluateCondition(loop.spec.until, {
        vars: {
          params: vars.params,
          vars: vars.vars,
          pipeline: { name: vars.pipeline },
          stage: { id: loop.id },
          loop: { iteration, round: String(iteration).padStart(3, '0'), max: loop.max },
          artifacts: vars.artifacts,
        },
      }),
    };
  } catch (error) {
    if (!(error instanceof ExprEvalError)) throw error;
    return { problem: `loop '${loop.id}' until: ${error.message}` };
  }
}

/** What a loop wrote, for stages that `needs:` it: what each of its iterations' stages wrote. */
export function loopOutputs(memberOutputs: readonly string[]): string {
  return digest(memberOutputs.join(','));
}
