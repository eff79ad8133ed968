import { BackendConfigError, BackendError, BudgetExceededError } from '../backends/errors.ts';
import type { LlmClient } from '../backends/llm-client.ts';
import type { LlmRequest } from '../backends/types.ts';
import type { ParseOutcome } from './evaluation.ts';
import { repairPrompt } from './prompts/repair-prompt.ts';

export type JudgeCallResult<T> =
  | { ok: true; value: T; complete: boolean; problems: string[]; attempts: number; rawTexts: string[] }
  | { ok: false; reason: string; attempts: number; rawTexts: string[]; budgetExhausted: boolean };

/** Errors the user must fix (unknown backend, missing key, missing recording): they fail the stage. */
export function isConfigProblem(error: unknown): boolean {
  return error instanceof BackendConfigError || (error instanceof BackendError && (error.kind === 'config' || error.kind === 'auth'));
}

/**
 * Asks a backend, parses the answer and, when it is malformed or incomplete, asks once more with the
 * problems listed. Backend failures (after the client's own retries) and budget exhaustion come back as
 * `ok: false` with the reason; configuration problems are thrown.
 */
export async function askWithRepair<T>(
  client: LlmClient,
  backend: string,
  request: LlmRequest,
  parse: (text: string) => ParseOutcome<T>,
  signal: AbortSignal,
): Promise<JudgeCallResult<T>> {
  const rawTexts: string[] = [];
  let best: Extract<ParseOutcome<T>, { ok: true }> | undefined;
  let lastReasons: string[] = [];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const current: LlmRequest =
      attempt === 1
        ? request
        : { ...request, tag: `repair-${request.tag}`, prompt: repairPrompt(request.prompt, rawTexts[rawTexts.length - 1] ?? '', lastReasons) };
    let text: string;
    try {
      text = (await client.call(backend, current, signal)).text;
    } catch (error) {
      if (isConfigProblem(error)) throw error;
      if (signal.aborted) throw error;
      const budgetExhausted = error instanceof BudgetExceededError;
      if (best) return { ...best, attempts: attempt, rawTexts };
      return { ok: false, reason: `${budgetExhausted ? '' : 'backend error: '}${(error as Error).message}`, attempts: attempt, rawTexts, budgetExhausted };
    }
    rawTexts.push(text);
    const outcome = parse(text);
    if (outcome.ok && outcome.complete) return { ...outcome, attempts: attempt, rawTexts };
    if (outcome.ok) {
      best = outcome;
      lastReasons = outcome.problems;
    } else lastReasons = outcome.reasons;
  }
  if (best) return { ...best, attempts: 2, rawTexts };
  return { ok: false, reason: `malformed output after one repair retry: ${lastReasons.slice(0, 6).join('; ')}`, attempts: 2, rawTexts, budgetExhausted: false };
}
