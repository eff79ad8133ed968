import { isRecord } from './json-extract.ts';

export type VerdictWord = 'iterate' | 'converged';

export interface VerdictExtras {
  preserve?: unknown[];
  improvements?: unknown[];
  opportunities?: unknown[];
}

export interface ParsedVerdict extends VerdictExtras {
  verdict: VerdictWord;
  /** Integer 1-10 per criterion id, in criteria order. */
  scores: Record<string, number>;
}

export type VerdictCheck = { ok: true; value: ParsedVerdict } | { ok: false; reasons: string[] };

function word(raw: unknown): VerdictWord | undefined {
  const value = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return value === 'iterate' || value === 'converged' ? value : undefined;
}

/**
 * MassGen's `normalize_verdict_payload` plus refine's contract: verdict in {iterate, converged}
 * (trimmed, lower-cased), one integer score 1-10 (numbers, not booleans, truncated like int()) per criterion.
 */
export function checkVerdict(payload: unknown, criteriaIds: readonly string[]): VerdictCheck {
  if (!isRecord(payload)) return { ok: false, reasons: ['the verdict is not a JSON object'] };
  const reasons: string[] = [];
  const verdict = word(payload.verdict);
  if (!verdict) reasons.push(`"verdict" must be "iterate" or "converged", got ${JSON.stringify(payload.verdict ?? null)}`);
  const raw = payload.scores;
  const scores: Record<string, number> = {};
  if (!isRecord(raw) || Object.keys(raw).length === 0) reasons.push('"scores" must be a non-empty object of criterion id -> integer 1-10');
  else {
    for (const id of criteriaIds) {
      const value = raw[id];
      if (typeof value !== 'number' || !Number.isFinite(value)) reasons.push(`scores.${id} is missing or not a number`);
      else if (Math.trunc(value) < 1 || Math.trunc(value) > 10) reasons.push(`scores.${id} = ${value} is outside 1-10`);
      else scores[id] = Math.trunc(value);
    }
    const extra = Object.keys(raw).filter((id) => !criteriaIds.includes(id));
    if (extra.length > 0) reasons.push(`scores has unknown criteria ${extra.join(', ')}; the criteria are ${criteriaIds.join(', ')}`);
  }
  if (reasons.length > 0 || !verdict) return { ok: false, reasons };
  const value: ParsedVerdict = { verdict, scores };
  for (const key of ['preserve', 'improvements', 'opportunities'] as const) {
    const list = payload[key];
    if (Array.isArray(list) && list.every(isRecord)) value[key] = list;
  }
  return { ok: true, value };
}

/** The verdict.json artifact (schema `verdict`). */
export interface VerdictArtifact extends VerdictExtras {
  schema_version: '1';
  verdict: VerdictWord;
  scores: Record<string, number>;
  status: 'ok' | 'degraded';
  degraded_reason?: string;
  judge?: { backend: string; model?: string };
  aggregate?: { mode: 'vote' | 'harshest' | 'mean'; judges: string[] };
  round?: number;
}

export function verdictArtifact(value: ParsedVerdict, judge: VerdictArtifact['judge'], round?: number): VerdictArtifact {
  return {
    schema_version: '1',
    verdict: value.verdict,
    scores: value.scores,
    status: 'ok',
    ...extras(value),
    ...(judge ? { judge } : {}),
    ...(round ? { round } : {}),
  };
}

function extras(value: VerdictExtras): VerdictExtras {
  const out: VerdictExtras = {};
  if (value.preserve) out.preserve = value.preserve;
  if (value.improvements) out.improvements = value.improvements;
  if (value.opportunities) out.opportunities = value.opportunities;
  return out;
}

/** The skill's parse-failure default: iterate, no scores, marked degraded with the reason. */
export function degradedVerdict(reason: string, judge: VerdictArtifact['judge'], round?: number): VerdictArtifact {
  return {
    schema_version: '1',
    verdict: 'iterate',
    scores: {},
    status: 'degraded',
    degraded_reason: reason,
    ...(judge ? { judge } : {}),
    ...(round ? { round } : {}),
  };
}
