import { PACKET_SECTIONS, SUMMARY_HEADING, splitPacketSections } from '../critique.ts';
import type { EvaluationFiles } from '../evaluation-files.ts';
import { placeholderNextTasks, type NextTasksArtifact } from '../next-tasks.ts';
import type { VerdictArtifact } from '../verdict.ts';

export interface Scored {
  judge: string;
  files: EvaluationFiles;
}

function letter(i: number): string {
  return String.fromCharCode(65 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : '');
}

function summaryItems(packet: string): { top: string[]; preserve: string[] } {
  const summary = packet.split(SUMMARY_HEADING)[1] ?? '';
  const top = summary.split('**Preserve**')[0] ?? '';
  const preserve = (summary.split('**Preserve**')[1] ?? '').split('**Next steps**')[0] ?? '';
  return {
    top: [...top.matchAll(/^\d+\.\s+(.+)$/gm)].map((m) => (m[1] ?? '').trim()),
    preserve: [...preserve.matchAll(/^-\s+(.+)$/gm)].map((m) => (m[1] ?? '').trim()).filter((p) => !p.startsWith('_')),
  };
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** One packet from several: every section with each evaluator's finding, and a merged summary. */
export function mergePackets(inputs: readonly Scored[], verdict: 'iterate' | 'converged', mode: string): string {
  const parts = inputs.map((input) => splitPacketSections(input.files.packet));
  const sections = PACKET_SECTIONS.map((key) => {
    const bodies = parts.map((p, i) => `### Evaluator ${letter(i)}\n\n${p.get(key) ?? '_Not provided._'}`);
    return `## ${key}\n\n${bodies.join('\n\n')}`;
  });
  const items = inputs.map((i) => summaryItems(i.files.packet));
  const top = unique(items.flatMap((i) => i.top));
  const preserve = unique(items.flatMap((i) => i.preserve));
  const summary = [
    SUMMARY_HEADING,
    '',
    `**Verdict**: ${verdict.toUpperCase()}`,
    '',
    '**Top improvements**:',
    top.length ? top.map((t, i) => `${i + 1}. ${t}`).join('\n') : '_None._',
    '',
    '**Preserve**:',
    preserve.length ? preserve.map((p) => `- ${p}`).join('\n') : '- _Nothing singled out._',
    '',
    `**Next steps**: ${verdict === 'converged' ? 'None; every evaluator agrees the deliverable has converged.' : `Apply the top improvements; scores are the ${mode} across evaluators.`}`,
  ].join('\n');
  return `# Critique Packet (${mode} of ${inputs.length} evaluators)\n\n${sections.join('\n\n')}\n\n${summary}\n`;
}

function meanScore(verdict: VerdictArtifact): number {
  const values = Object.values(verdict.scores);
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

function pickNextTasks(inputs: readonly Scored[], verdict: 'iterate' | 'converged', rank: (s: Scored) => number): NextTasksArtifact {
  if (verdict === 'converged') return placeholderNextTasks('none', 'the verdict is converged; there is nothing left to do');
  const candidates = inputs.filter((i) => i.files.verdict.verdict === 'iterate' && i.files.nextTasks.status === 'ok');
  let best: Scored | undefined;
  for (const c of candidates) if (!best || rank(c) < rank(best)) best = c;
  return best?.files.nextTasks ?? placeholderNextTasks('degraded', 'no evaluator that asked to iterate gave usable next_tasks');
}

/**
 * MassGen's multi-evaluator synthesis (`harshest`: the lowest score per criterion, iterate unless all
 * converged; next_tasks of the harshest evaluator) or `mean` (rounded mean, converged when more than half
 * say so; next_tasks of the evaluator closest to the mean). Inputs must be ok verdicts, in registration order.
 */
export function aggregate(inputs: readonly Scored[], mode: 'harshest' | 'mean', ids: readonly string[]): EvaluationFiles {
  const scores: Record<string, number> = {};
  for (const id of ids) {
    const values = inputs.map((i) => i.files.verdict.scores[id]).filter((v): v is number => v !== undefined);
    if (values.length === 0) continue;
    scores[id] = mode === 'harshest' ? Math.min(...values) : Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  }
  const converged = inputs.filter((i) => i.files.verdict.verdict === 'converged').length;
  const verdict = (mode === 'harshest' ? converged === inputs.length : converged > inputs.length / 2) ? 'converged' : 'iterate';
  const distance = (s: Scored): number => ids.reduce((sum, id) => sum + Math.abs((s.files.verdict.scores[id] ?? 0) - (scores[id] ?? 0)), 0);
  const rank = mode === 'harshest' ? (s: Scored) => meanScore(s.files.verdict) : distance;
  return {
    verdict: {
      schema_version: '1',
      verdict,
      scores,
      status: 'ok',
      judge: { backend: `consensus:${mode}` },
      aggregate: { mode, judges: inputs.map((i) => i.judge) },
    },
    packet: mergePackets(inputs, verdict, mode),
    nextTasks: pickNextTasks(inputs, verdict, rank),
  };
}
