import type { RunBudget } from '../../task/define-task.ts';

export function createRunBudget(limitUsd: number | undefined): RunBudget {
  let spent = 0;
  return {
    limitUsd,
    spentUsd: () => spent,
    canSpend: () => limitUsd === undefined || spent < limitUsd,
    charge: (usd) => {
      if (Number.isFinite(usd) && usd > 0) spent += usd;
    },
  };
}
