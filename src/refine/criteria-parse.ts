import { normalizeCriteria, criterionText, type Criterion } from './criteria.ts';
import { extractJson, isRecord } from './json-extract.ts';

export type CriteriaParse =
  | { ok: true; criteria: Criterion[]; aspiration?: string; notes: string[] }
  | { ok: false; reason: string };

/** MassGen's `_parse_criteria_response`: three parse attempts, 4-7 items (by default), at most one primary. */
export function parseCriteriaResponse(text: string, bounds: { min: number; max: number } = { min: 4, max: 7 }): CriteriaParse {
  const extracted = extractJson(text, /\{\s*"criteria"/);
  if (!extracted.ok) return { ok: false, reason: extracted.reason };
  const value = extracted.value;
  const list = Array.isArray(value) ? value : isRecord(value) ? value.criteria : undefined;
  if (!Array.isArray(list)) return { ok: false, reason: 'the JSON has no "criteria" array' };
  const bad = list.findIndex((item) => !isRecord(item) || criterionText(item) === undefined);
  if (bad >= 0) return { ok: false, reason: `criteria[${bad}] has no "text"` };
  if (list.length < bounds.min || list.length > bounds.max)
    return { ok: false, reason: `${list.length} criteria; between ${bounds.min} and ${bounds.max} are required` };
  const { criteria, demoted } = normalizeCriteria(list as Array<Record<string, unknown>>);
  const notes = demoted > 0 ? [`${demoted} extra 'primary' criteria demoted to 'standard'`] : [];
  const aspiration = isRecord(value) && typeof value.aspiration === 'string' && value.aspiration.trim() !== '' ? value.aspiration.trim() : undefined;
  return { ok: true, criteria, ...(aspiration ? { aspiration } : {}), notes };
}
