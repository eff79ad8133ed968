// The answer schema every analyst is sent (natively where the backend can, else in the prompt) and
// the reader of its answers. Strict subset: closed objects, every property required.
import type { AnswerReader } from '../../refine/judge-call.ts';
import { type AnswerSchema, choice, closed, listOf, nullable, text } from '../../refine/answer-schemas/strict-parts.ts';

export const SEVERITIES = ['high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** A fact of analysis.json by JSON pointer; `value`, when given, is what the analyst says the fact is. */
export interface FactEvidence {
  fact: string;
  value: string | null;
}

/** Lines `from`..`to` (1-based, inclusive) of a file of the turn, by its path relative to the turn folder. */
export interface FileEvidence {
  file: string;
  lines: [number, number];
}

export type Evidence = FactEvidence | FileEvidence;

export interface Finding {
  severity: Severity;
  claim: string;
  evidence: Evidence[];
}

const factEvidence = closed({ fact: text, value: nullable(text) });
const fileEvidence = closed({ file: text, lines: listOf({ type: 'integer', minimum: 1 }, { min: 2, max: 2 }) });

export const FINDINGS_SCHEMA: AnswerSchema = {
  name: 'self_analysis_findings',
  schema: closed({
    findings: listOf(
      closed({
        severity: choice(SEVERITIES),
        claim: text,
        evidence: listOf({ anyOf: [factEvidence, fileEvidence] }, { min: 1 }),
      }),
      { max: 20 },
    ),
  }),
};

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function readEvidence(value: unknown): Evidence | string {
  if (!isObject(value)) return 'evidence is not an object';
  if (typeof value.fact === 'string')
    return { fact: value.fact, value: value.value === undefined || value.value === null ? null : String(value.value) };
  const lines = value.lines;
  if (typeof value.file === 'string' && Array.isArray(lines) && lines.length === 2 && lines.every((n) => Number.isInteger(n)))
    return { file: value.file, lines: [lines[0] as number, lines[1] as number] };
  return 'evidence is neither {fact} nor {file, lines: [from, to]}';
}

function readFinding(value: unknown, at: number): Finding | string {
  if (!isObject(value)) return `findings/${at} is not an object`;
  const severity = SEVERITIES.find((s) => s === value.severity);
  if (!severity) return `findings/${at}/severity must be high, medium or low`;
  if (typeof value.claim !== 'string' || value.claim.trim() === '') return `findings/${at}/claim is empty`;
  if (!Array.isArray(value.evidence) || value.evidence.length === 0) return `findings/${at}/evidence is empty`;
  const evidence: Evidence[] = [];
  for (const e of value.evidence) {
    const read = readEvidence(e);
    if (typeof read === 'string') return `findings/${at}: ${read}`;
    evidence.push(read);
  }
  return { severity, claim: value.claim, evidence };
}

/** Reads an analyst's answer; a malformed finding makes it incomplete (askWithRepair asks once more). */
export const findingsReader: AnswerReader<Finding[]> = {
  marker: /\{\s*"findings"/,
  parse(value) {
    if (!isObject(value) || !Array.isArray(value.findings)) return { ok: false, reasons: ['the answer has no findings array'] };
    const findings: Finding[] = [];
    const problems: string[] = [];
    value.findings.forEach((f, i) => {
      const read = readFinding(f, i);
      if (typeof read === 'string') problems.push(read);
      else findings.push(read);
    });
    return { ok: true, value: findings, complete: problems.length === 0, problems };
  },
};
