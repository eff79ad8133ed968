import { normalizeCriteria, criterionText, type Criterion } from './criteria.ts';
import type { ParseOutcome } from './evaluation.ts';
import { extractJson, isRecord } from './json-extract.ts';
import type { AnswerReader } from './judge-call.ts';

export type CriteriaParse = { ok: true; criteria: Criterion[]; aspiration?: string; notes: string[] } | { ok: false; reason: string };

export type ParsedCriteria = Extract<CriteriaParse, { ok: true }>;

const CRITERIA_MARKER = /\{\s*"criteria"/;

/** MassGen's `_parse_criteria_response`: three parse attempts, 4-7 items (by default), at most one primary. */
export function parseCriteriaResponse(text: string, bounds: { min: number; max: number } = { min: 4, max: 7 }): CriteriaParse {
  const extracted = extractJson(text, CRITERIA_MARKER);
  if (!extracted.ok) return { ok: false, reason: extracted.reason };
  return criteriaFromValue(extracted.value, bounds);
}

export function criteriaFromValue(value: unknown, bounds: { min: number; max: number }): CriteriaParse {
  const list = Array.isArray(value) ? value : isRecord(value) ? value.criteria : undefined;
  if (!Array.isArray(list)) return { ok: false, reason: 'the JSON has no "criteria" array' };
  const bad = list.findIndex((item) => !isRecord(item) || criterionText(item) === undefined);
  if (bad >= 0) return { ok: false, reason: `criteria[${bad}] has no "text"` };
  if (list.length < bounds.min || list.length > bounds.max)
    return { ok: false, reason: `${list.length} criteria; between ${bounds.min} and ${bounds.max} are required` };
  const { criteria, demoted } = normalizeCriteria(list as Array<Record<string, unknown>>);
  const notes = demoted > 0 ? [`${demoted} extra 'primary' criteria demoted to 'standard'`] : [];
  const aspiration =
    isRecord(value) && typeof value.aspiration === 'string' && value.aspiration.trim() !== '' ? value.aspiration.trim() : undefined;
  return { ok: true, criteria, ...(aspiration ? { aspiration } : {}), notes };
}

export function criteriaReader(bounds: { min: number; max: number }): AnswerReader<ParsedCriteria> {
  return {
    marker: CRITERIA_MARKER,
    parse: (value): ParseOutcome<ParsedCriteria> => {
      const parsed = criteriaFromValue(value, bounds);
      return parsed.ok ? { ok: true, value: parsed, complete: true, problems: [] } : { ok: false, reasons: [parsed.reason] };
    },
  };
}
