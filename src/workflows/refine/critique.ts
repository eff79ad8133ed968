import { isRecord } from './json-extract.ts';
import type { VerdictWord } from './verdict.ts';
import { mdText } from '../../security/markdown-escape.ts';

/** The spec's critique_packet.md sections, in order (before the trailing Evaluation Summary). */
export const PACKET_SECTIONS = [
  'criteria_interpretation',
  'criterion_findings',
  'cross_answer_synthesis',
  'unexplored_approaches',
  'approach_assessment',
  'preserve',
  'improvement_spec',
  'verification_plan',
  'evidence_gaps',
] as const;

export const IMPROVEMENT_SPEC_KEYS = [
  'objective',
  'quality_bar',
  'execution_order',
  'per_criterion_spec',
  'cross_cutting_changes',
  'preserve_invariants',
  'anti_goals',
  'deliverable_expectations',
] as const;

export const SUMMARY_HEADING = '## Evaluation Summary';

/** The critique as a judge returns it (JSON); prose fields may be a string, a list or a map by criterion. */
export interface Critique {
  sections: Partial<Record<(typeof PACKET_SECTIONS)[number], unknown>>;
  summary: { top_improvements: Array<{ description: string; guidance: string }>; preserve: string[]; next_steps: string };
}

export type CritiqueCheck = { ok: true; value: Critique } | { ok: false; reasons: string[] };

function present(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  return isRecord(value) && Object.keys(value).length > 0;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string' && value.trim() !== '') return [value.trim()];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

/** A critique needs its findings; the other sections render as "Not provided." when absent. */
export function checkCritique(raw: unknown): CritiqueCheck {
  if (!isRecord(raw)) return { ok: false, reasons: ['"critique" must be an object with the critique_packet sections'] };
  if (!present(raw.criterion_findings)) return { ok: false, reasons: ['critique.criterion_findings is required'] };
  const sections: Critique['sections'] = {};
  for (const key of PACKET_SECTIONS) if (present(raw[key])) sections[key] = raw[key];
  const summary = isRecord(raw.summary) ? raw.summary : {};
  const top = Array.isArray(summary.top_improvements) ? summary.top_improvements : [];
  return {
    ok: true,
    value: {
      sections,
      summary: {
        top_improvements: top
          .map((item) =>
            typeof item === 'string'
              ? { description: item, guidance: '' }
              : isRecord(item)
                ? { description: String(item.description ?? item.desc ?? ''), guidance: String(item.guidance ?? '') }
                : { description: '', guidance: '' },
          )
          .filter((item) => item.description.trim() !== ''),
        preserve: strings(summary.preserve),
        next_steps: typeof summary.next_steps === 'string' ? summary.next_steps.trim() : strings(summary.next_steps).join(' '),
      },
    },
  };
}

function renderValue(value: unknown, depth = 0): string {
  if (value === undefined || value === null || !present(value)) return '_Not provided._';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const indent = '  '.repeat(depth);
  if (Array.isArray(value))
    return value.map((item) => `${indent}- ${typeof item === 'string' ? item : renderValue(item, depth + 1).trimStart()}`).join('\n');
  return Object.entries(value as Record<string, unknown>)
    .map(([key, item]) => {
      const body = renderValue(item, depth + 1);
      return body.includes('\n') ? `${indent}- **${key}**:\n${body}` : `${indent}- **${key}**: ${body.trim()}`;
    })
    .join('\n');
}

function renderImprovementSpec(value: unknown): string {
  if (!isRecord(value)) return renderValue(value);
  return IMPROVEMENT_SPEC_KEYS.map((key) => `### ${key}\n\n${renderValue(value[key])}`).join('\n\n');
}

export function renderSummary(verdict: VerdictWord, summary: Critique['summary']): string {
  const top = summary.top_improvements.length
    ? summary.top_improvements.map((item, i) => `${i + 1}. ${item.description}${item.guidance ? ` — ${item.guidance}` : ''}`).join('\n')
    : '_None._';
  const preserve = summary.preserve.length ? summary.preserve.map((p) => `- ${p}`).join('\n') : '- _Nothing singled out._';
  return [
    SUMMARY_HEADING,
    '',
    `**Verdict**: ${verdict.toUpperCase()}`,
    '',
    '**Top improvements**:',
    top,
    '',
    '**Preserve**:',
    preserve,
    '',
    `**Next steps**: ${summary.next_steps || (verdict === 'converged' ? 'None; the deliverable has converged.' : 'Apply the top improvements.')}`,
  ].join('\n');
}

/** critique_packet.md: the spec's sections in order, then the Evaluation Summary. */
export function renderCritiquePacket(critique: Critique, verdict: VerdictWord, title = 'Critique Packet'): string {
  const body = PACKET_SECTIONS.map((key) => {
    const value = critique.sections[key];
    return `## ${key}\n\n${key === 'improvement_spec' ? renderImprovementSpec(value) : renderValue(value)}`;
  });
  return `# ${title}\n\n${body.join('\n\n')}\n\n${renderSummary(verdict, critique.summary)}\n`;
}

/** The packet written when a judge's answer was unusable: the reason, and the raw answer for a human. */
export function renderDegradedPacket(reason: string, rawAnswer: string | undefined): string {
  const raw = rawAnswer?.trim() ? `\n## raw_answer\n\n~~~~text\n${rawAnswer.trim().replaceAll('~~~~', '~ ~ ~ ~')}\n~~~~\n` : '';
  return `# Critique Packet (degraded)\n\n**Status**: degraded\n\n**Reason**: ${mdText(reason)}\n${raw}\n${SUMMARY_HEADING}\n\n**Verdict**: ITERATE\n\n**Top improvements**:\n_None; the evaluation could not be parsed._\n\n**Preserve**:\n- _Unknown._\n\n**Next steps**: Re-run the evaluation or rely on the other judges.\n`;
}

/** Splits a packet into `## heading` -> body (for merging several packets). */
export function splitPacketSections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = markdown.split(/^## /m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    const heading = (newline < 0 ? part : part.slice(0, newline)).trim();
    sections.set(heading, newline < 0 ? '' : part.slice(newline + 1).trim());
  }
  return sections;
}
