import { validateAgainst } from '../../engine/artifacts/schema-registry.ts';
import { BackendConfigError, BackendError, BudgetExceededError } from '../backends/errors.ts';
import type { LlmClient } from '../backends/llm-client.ts';
import type { LlmRequest } from '../backends/types.ts';
import type { AnswerSchema } from './answer-schemas/strict-parts.ts';
import { extractJson } from './json-extract.ts';
import { repairPrompt } from './prompts/repair-prompt.ts';

export type JudgeCallResult<T> =
  | { ok: true; value: T; complete: boolean; problems: string[]; attempts: number; rawTexts: string[] }
  | { ok: false; reason: string; attempts: number; rawTexts: string[]; budgetExhausted: boolean };

/** `complete` is false when something optional is missing and a repair may still help. */
export type ParseOutcome<T> = { ok: true; value: T; complete: boolean; problems: string[] } | { ok: false; reasons: string[] };

/** How one kind of answer is read: where its JSON starts in prose, and what it means once it parsed. */
export interface AnswerReader<T> {
  /** Opening of the answer object, for the brace scan (e.g. /\{\s*"verdict"/). */
  marker?: RegExp;
  parse(value: unknown): ParseOutcome<T>;
}

/** A request whose answer must match `jsonSchema`, the same schema the backend is sent. */
export type SchemaRequest = Omit<LlmRequest, 'jsonSchema' | 'check'> & { jsonSchema: AnswerSchema };

interface Reading<T> {
  outcome: ParseOutcome<T>;
  /** ajv's complaints against the call's schema, as `pointer message`. */
  schemaErrors: string[];
}

const SHOWN_SCHEMA_ERRORS = 12;

/** Errors the user must fix (unknown backend, missing key, missing recording): they fail the stage. */
export function isConfigProblem(error: unknown): boolean {
  return error instanceof BackendConfigError || (error instanceof BackendError && (error.kind === 'config' || error.kind === 'auth'));
}

function read<T>(text: string, schema: AnswerSchema, reader: AnswerReader<T>): Reading<T> {
  const extracted = extractJson(text, reader.marker);
  if (!extracted.ok) return { outcome: { ok: false, reasons: [extracted.reason] }, schemaErrors: [] };
  const check = validateAgainst(schema.schema, extracted.value);
  const schemaErrors = check.ok ? [] : check.issues.map((i) => `${i.pointer || '/'} ${i.message}`);
  return { outcome: reader.parse(extracted.value), schemaErrors };
}

function usable<T>(reading: Reading<T>): boolean {
  return reading.outcome.ok && reading.outcome.complete && reading.schemaErrors.length === 0;
}

/**
 * Asks a backend with the call's answer schema, checks the answer with ajv against that schema and reads
 * it; when it is malformed, off-schema or incomplete, asks once more quoting ajv's errors and the
 * problems. An answer whose meaning is usable but off-schema is kept when the repair is no better.
 * Backend failures (after the client's own retries) and budget exhaustion come back as `ok: false`
 * with the reason; configuration problems are thrown.
 */
export async function askWithRepair<T>(
  client: LlmClient,
  backend: string,
  request: SchemaRequest,
  reader: AnswerReader<T>,
  signal: AbortSignal,
): Promise<JudgeCallResult<T>> {
  const readings = new Map<string, Reading<T>>();
  const readText = (text: string): Reading<T> => {
    let reading = readings.get(text);
    if (!reading) {
      reading = read(text, request.jsonSchema, reader);
      readings.set(text, reading);
    }
    return reading;
  };
  const rawTexts: string[] = [];
  let best: Extract<ParseOutcome<T>, { ok: true }> | undefined;
  let last: Reading<T> | undefined;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const problems = last ? (last.outcome.ok ? last.outcome.problems : last.outcome.reasons) : [];
    const prompt =
      attempt === 1
        ? request.prompt
        : repairPrompt(request.prompt, rawTexts.at(-1) ?? '', problems, (last?.schemaErrors ?? []).slice(0, SHOWN_SCHEMA_ERRORS));
    const current: LlmRequest = {
      ...request,
      tag: attempt === 1 ? request.tag : `repair-${request.tag}`,
      prompt,
      check: (text) => usable(readText(text)),
    };
    let text: string;
    try {
      text = (await client.call(backend, current, signal)).text;
    } catch (error) {
      if (isConfigProblem(error)) throw error;
      if (signal.aborted) throw error;
      const budgetExhausted = error instanceof BudgetExceededError;
      if (best) return { ...best, attempts: attempt, rawTexts };
      return {
        ok: false,
        reason: `${budgetExhausted ? '' : 'backend error: '}${(error as Error).message}`,
        attempts: attempt,
        rawTexts,
        budgetExhausted,
      };
    }
    rawTexts.push(text);
    last = readText(text);
    const { outcome, schemaErrors } = last;
    if (usable(last) && outcome.ok) return { ...outcome, attempts: attempt, rawTexts };
    if (outcome.ok) best = { ...outcome, complete: false, problems: [...schemaErrors.map((e) => `schema: ${e}`), ...outcome.problems] };
  }
  if (best) return { ...best, attempts: 2, rawTexts };
  const reasons = last
    ? last.outcome.ok
      ? last.outcome.problems
      : [...last.outcome.reasons, ...last.schemaErrors.map((e) => `schema: ${e}`)]
    : [];
  return {
    ok: false,
    reason: `malformed output after one repair retry: ${reasons.slice(0, 6).join('; ')}`,
    attempts: 2,
    rawTexts,
    budgetExhausted: false,
  };
}
