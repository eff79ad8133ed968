import { BudgetExceededError } from './errors.ts';

/**
 * A spending limit owned by someone else, checked before each uncached call: the engine's run
 * budget (`refinery run --budget-usd N`, the task API's `ctx.budget`). Its owner charges it.
 */
export interface SpendGate {
  readonly limitUsd: number | undefined;
  spentUsd(): number;
  canSpend(): boolean;
}

/** Throws BudgetExceededError (scope 'run') when the gate allows no new call. */
export function assertGateOpen(gate: SpendGate | undefined): void {
  if (gate && !gate.canSpend()) throw new BudgetExceededError(gate.spentUsd(), gate.limitUsd ?? 0, 'run');
}

/** A run's spending cap. Checked before each uncached call; cost is known only after, so one call may overshoot. */
export class Budget {
  private spent = 0;

  constructor(readonly limitUsd: number = Number.POSITIVE_INFINITY) {
    if (!(limitUsd >= 0)) throw new RangeError(`budget must be a non-negative number of USD, got ${limitUsd}`);
  }

  get spentUsd(): number {
    return this.spent;
  }

  get remainingUsd(): number {
    return Math.max(0, this.limitUsd - this.spent);
  }

  get exhausted(): boolean {
    return this.spent >= this.limitUsd;
  }

  /** Throws BudgetExceededError when no new call may start. */
  assertAvailable(): void {
    if (this.exhausted) throw new BudgetExceededError(this.spent, this.limitUsd);
  }

  charge(costUsd: number): void {
    if (costUsd > 0) this.spent += costUsd;
  }
}

const runBudgets = new Map<string, Budget>();

/**
 * The budget shared by every stage of one run in this process. The first caller fixes the limit;
 * later callers with a different limit get the same object (the engine should pass one in instead).
 */
export function budgetForRun(runId: string, limitUsd: number | undefined): Budget {
  let budget = runBudgets.get(runId);
  if (!budget) {
    budget = new Budget(limitUsd ?? Number.POSITIVE_INFINITY);
    runBudgets.set(runId, budget);
  }
  return budget;
}
