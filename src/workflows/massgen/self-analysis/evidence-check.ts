// Which findings stand on their evidence. Pure: the analysis, the turn's file line counts and the
// findings in; the findings shown and the unverified ones (with every reason) out.
import type { Evidence, Finding } from './findings-schema.ts';

export interface UnverifiedFinding {
  finding: Finding;
  reasons: string[];
}

export interface CheckedFindings {
  verified: Finding[];
  unverified: UnverifiedFinding[];
}

type Resolved = { ok: true; value: unknown } | { ok: false; reason: string };

/** RFC 6901: `/a/0/b`, with `~1` for `/` and `~0` for `~`. */
export function resolvePointer(document: unknown, pointer: string): Resolved {
  if (!pointer.startsWith('/')) return { ok: false, reason: `fact '${pointer}' is not a JSON pointer (it starts with /)` };
  let node: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(key) && Number(key) < node.length) node = node[Number(key)];
    else if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, key))
      node = (node as Record<string, unknown>)[key];
    else return { ok: false, reason: `fact ${pointer} does not exist in analysis.json` };
  }
  return { ok: true, value: node };
}

/** The claimed value against the fact, where a scalar makes it checkable: a reason when they differ. */
export function contradiction(pointer: string, fact: unknown, claimed: string): string | undefined {
  const said = claimed.trim();
  if (fact !== null && typeof fact === 'object') return undefined;
  const differs = (): string => `claims ${pointer} is ${said}, but analysis.json has ${JSON.stringify(fact)}`;
  if (typeof fact === 'number') {
    const n = Number(said.replace(/^\$/, '').replace(/,/g, '').replace(/%$/, ''));
    if (!Number.isFinite(n)) return differs();
    // A claim may round: 0.1234 said as 0.12 agrees to the digits it gives.
    const decimals = (said.split('.')[1] ?? '').replace(/\D/g, '').length;
    const rounded = Number(fact.toFixed(Math.min(decimals, 12)));
    return Math.abs(n - fact) <= 1e-9 * Math.max(1, Math.abs(fact)) || n === rounded ? undefined : differs();
  }
  if (fact === null) return said === 'null' ? undefined : differs();
  return String(fact).trim().toLowerCase() === said.toLowerCase() ? undefined : differs();
}

function problemOf(evidence: Evidence, analysis: unknown, fileLines: ReadonlyMap<string, number>): string | undefined {
  if ('fact' in evidence) {
    const resolved = resolvePointer(analysis, evidence.fact);
    if (!resolved.ok) return resolved.reason;
    return evidence.value === null ? undefined : contradiction(evidence.fact, resolved.value, evidence.value);
  }
  const [from, to] = evidence.lines;
  const lines = fileLines.get(evidence.file);
  if (lines === undefined) return `file ${evidence.file} is not a file of this turn`;
  if (from < 1 || to < from) return `lines ${from}-${to} of ${evidence.file} are not a range (from >= 1, to >= from)`;
  if (to > lines) return `lines ${from}-${to} are beyond the end of ${evidence.file} (${lines} line(s))`;
  return undefined;
}

/** Splits findings: every piece of evidence must hold, or the finding is unverified with all the reasons. */
export function checkFindings(findings: readonly Finding[], analysis: unknown, fileLines: ReadonlyMap<string, number>): CheckedFindings {
  const verified: Finding[] = [];
  const unverified: UnverifiedFinding[] = [];
  for (const finding of findings) {
    const reasons = finding.evidence.flatMap((e) => problemOf(e, analysis, fileLines) ?? []);
    if (finding.evidence.length === 0) reasons.push('no evidence');
    if (reasons.length === 0) verified.push(finding);
    else unverified.push({ finding, reasons });
  }
  return { verified, unverified };
}
