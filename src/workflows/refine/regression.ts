import { extractJson, isRecord } from './json-extract.ts';
import type { ParseOutcome } from './evaluation.ts';
import type { AnswerReader } from './judge-call.ts';

export type Side = 'A' | 'B';

export interface Dimension {
  criterion: string;
  answer_a_score: number;
  answer_b_score: number;
  stronger: Side | 'equivalent';
  difference: 'substantial' | 'marginal';
  evidence: string;
}

export interface GuardVerdict {
  summary: string;
  dimensions: Dimension[];
  answer_a_wins: string[];
  answer_b_wins: string[];
  equivalent: string[];
}

export type GuardResult = 'pass' | 'fail' | 'mixed';

/** regression.json (schema `regression`): MassGen's regression-guard verdict plus refine's derived result. */
export interface RegressionArtifact extends Partial<GuardVerdict> {
  schema_version: '1';
  status: 'ok' | 'skipped' | 'degraded';
  /** Which blind label the candidate (the new version) had. */
  candidate?: Side;
  result: GuardResult | null;
  reason?: string;
  judge?: { backend: string; model?: string };
}

function score(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && Math.trunc(value) >= 1 && Math.trunc(value) <= 10
    ? Math.trunc(value)
    : undefined;
}

function dimension(raw: unknown, where: string, ids: readonly string[], reasons: string[]): Dimension | undefined {
  if (!isRecord(raw)) {
    reasons.push(`${where} is not an object`);
    return undefined;
  }
  const criterion = typeof raw.criterion === 'string' ? raw.criterion.trim() : '';
  const a = score(raw.answer_a_score);
  const b = score(raw.answer_b_score);
  const strongerRaw = typeof raw.stronger === 'string' ? raw.stronger.trim() : '';
  const stronger = strongerRaw.toLowerCase() === 'equivalent' ? 'equivalent' : strongerRaw.toUpperCase();
  const difference = typeof raw.difference === 'string' ? raw.difference.trim().toLowerCase() : '';
  const before = reasons.length;
  if (!ids.includes(criterion)) reasons.push(`${where}.criterion must be one of ${ids.join(', ')}`);
  if (a === undefined || b === undefined) reasons.push(`${where}: answer_a_score and answer_b_score must be integers 1-10`);
  if (!['A', 'B', 'equivalent'].includes(stronger)) reasons.push(`${where}.stronger must be "A", "B" or "equivalent"`);
  if (!['substantial', 'marginal'].includes(difference)) reasons.push(`${where}.difference must be "substantial" or "marginal"`);
  if (reasons.length > before) return undefined;
  return {
    criterion,
    answer_a_score: a as number,
    answer_b_score: b as number,
    stronger: stronger as Dimension['stronger'],
    difference: difference as Dimension['difference'],
    evidence: typeof raw.evidence === 'string' ? raw.evidence.trim() : '',
  };
}

const GUARD_MARKER = /\{\s*"summary"/;

/** The guard's answer: one dimension per criterion; the win lists are derived from the dimensions. */
export function parseGuardAnswer(text: string, ids: readonly string[]): ParseOutcome<GuardVerdict> {
  const extracted = extractJson(text, GUARD_MARKER);
  if (!extracted.ok) return { ok: false, reasons: [extracted.reason] };
  return guardFromValue(extracted.value, ids);
}

export function guardReader(ids: readonly string[]): AnswerReader<GuardVerdict> {
  return { marker: GUARD_MARKER, parse: (value) => guardFromValue(value, ids) };
}

function guardFromValue(value: unknown, ids: readonly string[]): ParseOutcome<GuardVerdict> {
  if (!isRecord(value) || !Array.isArray(value.dimensions)) return { ok: false, reasons: ['the answer needs a "dimensions" array'] };
  const reasons: string[] = [];
  const dims = value.dimensions
    .map((d, i) => dimension(d, `dimensions[${i}]`, ids, reasons))
    .filter((d): d is Dimension => d !== undefined);
  const missing = ids.filter((id) => !dims.some((d) => d.criterion === id));
  if (missing.length > 0) reasons.push(`no dimension for ${missing.join(', ')}`);
  const dup = ids.filter((id) => dims.filter((d) => d.criterion === id).length > 1);
  if (dup.length > 0) reasons.push(`more than one dimension for ${dup.join(', ')}`);
  if (reasons.length > 0) return { ok: false, reasons };
  const ordered = ids.map((id) => dims.find((d) => d.criterion === id) as Dimension);
  return {
    ok: true,
    value: {
      summary: typeof value.summary === 'string' ? value.summary.trim() : '',
      dimensions: ordered,
      answer_a_wins: ordered.filter((d) => d.stronger === 'A').map((d) => d.criterion),
      answer_b_wins: ordered.filter((d) => d.stronger === 'B').map((d) => d.criterion),
      equivalent: ordered.filter((d) => d.stronger === 'equivalent').map((d) => d.criterion),
    },
    complete: true,
    problems: [],
  };
}

/**
 * The spec's derived mapping, from the candidate's side: `fail` when it loses on most criteria, or has no
 * win and at least one substantial loss; `pass` when it has no substantial loss and wins or ties on most;
 * `mixed` otherwise.
 */
export function deriveResult(dimensions: readonly Dimension[], candidate: Side): GuardResult {
  const n = dimensions.length;
  const wins = dimensions.filter((d) => d.stronger === candidate).length;
  const ties = dimensions.filter((d) => d.stronger === 'equivalent').length;
  const losses = dimensions.filter((d) => d.stronger !== candidate && d.stronger !== 'equivalent');
  const substantialLosses = losses.filter((d) => d.difference === 'substantial').length;
  if (losses.length > n / 2) return 'fail';
  if (wins === 0 && substantialLosses > 0) return 'fail';
  if (substantialLosses === 0 && wins + ties > n / 2) return 'pass';
  return 'mixed';
}
