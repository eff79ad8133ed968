import { mdCell, mermaidLabel } from '../../../security/markdown-escape.ts';
import type { GridSummary } from './grid-summary.ts';

// Config names, questions and MassGen's errors are text from outside: escaped where shown.
const cellText = (text: string) => mdCell(text);
const short = (text: string, n = 60) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

/** EXPERIMENTS.md: per cell, per config, and a chart of each config's mean duration. */
export function renderGrid(summary: GridSummary): string {
  const t = summary.totals;
  const lines = [
    '# Experiments',
    '',
    `${summary.configs.length} config(s) × ${summary.questions.length} question(s) × ${summary.repeat} repeat(s): ${t.succeeded} succeeded, ${t.failed} failed, ${t.missing} not run; ${t.duration_s.toFixed(1)} s of MassGen runs, $${t.cost_usd.toFixed(4)}.`,
    '',
    '## Per config',
    '',
    '| config | cells | ok | failed | mean duration (s) | cost ($) | answers | votes | winners |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const c of summary.per_config) {
    const winners = Object.entries(c.winners)
      .map(([w, n]) => `${w} ×${n}`)
      .join(', ');
    lines.push(
      `| ${cellText(c.config)} | ${c.cells} | ${c.succeeded} | ${c.failed} | ${c.mean_duration_s.toFixed(1)} | ${c.cost_usd.toFixed(4)} | ${c.answers} | ${c.votes} | ${cellText(winners || '-')} |`,
    );
  }
  lines.push('', '```mermaid', 'xychart-beta', '    title "Mean duration per config (s)"');
  lines.push(`    x-axis [${summary.per_config.map((c) => `"${mermaidLabel(c.config, 30)}"`).join(', ')}]`);
  lines.push('    y-axis "seconds"', `    bar [${summary.per_config.map((c) => c.mean_duration_s.toFixed(1)).join(', ')}]`, '```', '');
  lines.push(
    '## Cells',
    '',
    '| config | question | repeat | winner | answers | votes | duration (s) | cost ($) | errors | log |',
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const c of summary.cells) {
    lines.push(
      `| ${cellText(c.config)} | ${cellText(short(c.question))} | ${c.repeat} | ${cellText(c.winner ?? '-')} | ${c.answers ?? '-'} | ${c.votes ?? '-'} | ${c.duration_s.toFixed(1)} | ${c.cost_usd === null ? '-' : c.cost_usd.toFixed(4)} | ${cellText(c.errors.map((e) => short(e, 80)).join('; ') || '-')} | ${cellText(c.log_dir ?? '-')} |`,
    );
  }
  if (summary.missing.length) {
    lines.push('', '## Not run', '');
    for (const m of summary.missing) lines.push(`- ${cellText(m.config)} · ${cellText(short(m.question))} · repeat ${m.repeat}`);
  }
  return `${lines.join('\n')}\n`;
}
