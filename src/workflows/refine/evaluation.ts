import { checkCritique, type Critique } from './critique.ts';
import type { AnswerReader, ParseOutcome } from './judge-call.ts';
import { extractJson, isRecord } from './json-extract.ts';
import { checkNextTasks, type NextTasksOk } from './next-tasks.ts';
import { checkVerdict, type ParsedVerdict } from './verdict.ts';

export type { ParseOutcome } from './judge-call.ts';

/** One judge's evaluation, parsed from its answer. */
export interface Evaluation {
  verdict: ParsedVerdict;
  critique: Critique;
  /** Present when the verdict is iterate and the plan is valid. */
  nextTasks?: NextTasksOk;
  /** Why next_tasks is unusable (iterate only). */
  nextTasksProblem?: string;
}

/** Parses `{verdict, scores, critique, next_tasks}` (also `{verdict: {verdict, scores}, ...}`). */
export function evaluationFromValue(value: unknown, criteriaIds: readonly string[]): ParseOutcome<Evaluation> {
  if (!isRecord(value)) return { ok: false, reasons: ['the answer is not a JSON object'] };
  const verdictPayload = isRecord(value.verdict) ? value.verdict : value;
  const verdict = checkVerdict(verdictPayload, criteriaIds);
  const critique = checkCritique(value.critique);
  const reasons = [...(verdict.ok ? [] : verdict.reasons), ...(critique.ok ? [] : critique.reasons)];
  if (!verdict.ok || !critique.ok) return { ok: false, reasons };
  const evaluation: Evaluation = { verdict: verdict.value, critique: critique.value };
  if (verdict.value.verdict === 'converged') return { ok: true, value: evaluation, complete: true, problems: [] };
  const tasks = checkNextTasks(value.next_tasks);
  if (tasks.ok) return { ok: true, value: { ...evaluation, nextTasks: tasks.value }, complete: true, problems: [] };
  const problem = `next_tasks: ${tasks.reasons.slice(0, 6).join('; ')}`;
  return { ok: true, value: { ...evaluation, nextTasksProblem: problem }, complete: false, problems: [problem] };
}

const EVALUATION_MARKER = /\{\s*"verdict"/;

export function parseEvaluation(text: string, criteriaIds: readonly string[]): ParseOutcome<Evaluation> {
  const extracted = extractJson(text, EVALUATION_MARKER);
  if (!extracted.ok) return { ok: false, reasons: [extracted.reason] };
  return evaluationFromValue(extracted.value, criteriaIds);
}

export function evaluationReader(criteriaIds: readonly string[]): AnswerReader<Evaluation> {
  return { marker: EVALUATION_MARKER, parse: (value) => evaluationFromValue(value, criteriaIds) };
}

const VERDICT_BLOCK = /(?:```|~~~)json\s+verdict_block\s*\n([\s\S]*?)\n(?:```|~~~)/;

/**
 * MassGen's only inline delimiter: a ```json verdict_block fence. Returns the verdict and the
 * rest of the text (the fence stripped) as the packet, or undefined.
 */
export function salvageVerdictBlock(text: string, criteriaIds: readonly string[]): { verdict: ParsedVerdict; packet: string } | undefined {
  const match = VERDICT_BLOCK.exec(text);
  if (!match) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(match[1] ?? '');
  } catch {
    return undefined;
  }
  const verdict = checkVerdict(payload, criteriaIds);
  const packet = text.replace(VERDICT_BLOCK, '').trim();
  return verdict.ok && packet !== '' ? { verdict: verdict.value, packet } : undefined;
}
