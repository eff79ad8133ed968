// self-analysis.json and the "Analysts' findings" part of ANALYSIS_REPORT.md. Model text is escaped
// (it is shown, never interpreted) and cleaned of secrets, as everything written is.
import { mdCode, mdText } from '../../../security/markdown-escape.ts';
import { redactSecrets, redactSecretsDeep } from '../../../security/known-secrets.ts';
import type { Evidence, Finding } from './findings-schema.ts';
import type { AnalystResult } from './run-analysts.ts';

export interface SelfAnalysis {
  schemaVersion: 1;
  kind: 'massgen-self-analysis';
  session: string;
  turn: number;
  partial: boolean;
  analysts: AnalystResult[];
}

export function selfAnalysisArtifact(session: string, turn: number, analysts: AnalystResult[]): SelfAnalysis {
  return redactSecretsDeep({
    schemaVersion: 1,
    kind: 'massgen-self-analysis',
    session,
    turn,
    partial: analysts.some((a) => a.status === 'failed'),
    analysts,
  });
}

/** Paths from the report's folder: to analysis.json and to the turn folder the files are relative to. */
export interface LinkBase {
  analysis: string;
  turn: string;
}

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

function evidenceLink(e: Evidence, base: LinkBase): string {
  if ('fact' in e) {
    const value = e.value === null ? '' : ` = ${mdCode(e.value)}`;
    return `[${mdCode(e.fact)}](${encodePath(base.analysis)})${value}`;
  }
  const target = base.turn === '' ? e.file : `${base.turn}/${e.file}`;
  return `[${mdCode(`${e.file}:${e.lines[0]}-${e.lines[1]}`)}](${encodePath(target)}#L${e.lines[0]}-L${e.lines[1]})`;
}

function findingLine(f: Finding, base: LinkBase): string {
  return `- **${f.severity.toUpperCase()}** ${mdText(f.claim)} (evidence: ${f.evidence.map((e) => evidenceLink(e, base)).join('; ')})`;
}

function analystSection(a: AnalystResult, base: LinkBase): string[] {
  const title = `### ${a.perspective[0]?.toUpperCase()}${a.perspective.slice(1)} (${mdCode(a.backend)}, ${mdCode(a.model)})`;
  if (a.status === 'failed') return [title, '', `**Failed:** ${mdText(a.reason ?? 'unknown reason')}`, ''];
  const lines = [title, ''];
  lines.push(...(a.findings.length > 0 ? a.findings.map((f) => findingLine(f, base)) : ['No verified findings.']));
  if (a.unverified.length > 0) {
    lines.push('', '#### Unverified', '');
    for (const u of a.unverified) lines.push(`${findingLine(u.finding, base)}: ${u.reasons.map((r) => mdText(r)).join('; ')}`);
  }
  lines.push('');
  return lines;
}

/** The deterministic report first, then one section per analyst. */
export function combinedReport(deterministic: string, result: SelfAnalysis, base: LinkBase): string {
  const head = [
    "## Analysts' findings",
    '',
    'Model analysts judged the facts above from three perspectives. A finding is shown only when every piece of its',
    "evidence exists in analysis.json or the turn's files and agrees with the facts; the others are listed as unverified.",
    ...(result.partial ? ['', '**Partial:** at least one analyst failed (see its section).'] : []),
    '',
  ];
  const body = result.analysts.flatMap((a) => analystSection(a, base));
  return redactSecrets(`${deterministic.trimEnd()}\n\n${[...head, ...body].join('\n').trimEnd()}\n`);
}
