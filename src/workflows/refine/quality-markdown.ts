import { mdCell, mermaidLabel } from '../../security/markdown-escape.ts';
import type { JudgeStanding } from './judge-quality.ts';
import type { AnswerStats } from './answer-stats.ts';
import type { SessionSummary } from './session-summary.ts';

/** Judge names, schema routes and file paths come from config and the session: every cell is escaped. */

function signed(value: number): string {
  return `${value > 0 ? '+' : ''}${value.toFixed(2)}`;
}

/**
 * A judge's standing in words: harsher or more lenient than the consensus by half a point or more,
 * and erratic when its misses go both ways by a point or more on average (|offset| well above the offset).
 */
export function standingReading(s: Pick<JudgeStanding, 'mean_offset' | 'mean_abs_offset'>): string {
  const lean =
    s.mean_offset <= -0.5
      ? 'harsher than the consensus'
      : s.mean_offset >= 0.5
        ? 'more lenient than the consensus'
        : 'in line with the consensus';
  return s.mean_abs_offset - Math.abs(s.mean_offset) >= 1 ? `${lean}, erratic` : lean;
}

/** Per criterion and round: the score spread and how many judges agree on pass (>= 7) or fail; then verdicts. */
function agreementTable(summary: SessionSummary, ids: readonly string[]): string[] {
  const rounds = summary.rounds;
  const head = `| criterion | ${rounds.map((r) => `round ${r.round}`).join(' | ')} |`;
  const rule = `| --- | ${rounds.map(() => '---').join(' | ')} |`;
  const rows = ids.map((id) => {
    const cells = rounds.map((r) => {
      const c = r.agreement?.criteria.find((x) => x.id === id);
      return c ? `${c.min}–${c.max} (spread ${c.spread}, σ ${c.stdev.toFixed(2)}), ${c.agree}/${c.judges} agree` : '–';
    });
    return `| ${mdCell(id)} | ${cells.join(' | ')} |`;
  });
  const verdicts = rounds.map((r) => (r.agreement ? `${r.agreement.verdicts_agree}/${r.agreement.judges} gave ${r.verdict}` : '–'));
  return [head, rule, ...rows, `| verdict | ${verdicts.join(' | ')} |`];
}

function standingsTable(standings: readonly JudgeStanding[]): string[] {
  return [
    '| judge | rounds | mean offset | mean \\|offset\\| | reading |',
    '| --- | ---: | ---: | ---: | --- |',
    ...standings.map(
      (s) => `| ${mdCell(s.judge)} | ${s.rounds} | ${signed(s.mean_offset)} | ${s.mean_abs_offset.toFixed(2)} | ${standingReading(s)} |`,
    ),
  ];
}

/** A Mermaid xychart-beta bar per judge: its mean offset from the consensus (below 0: harsher). */
function standingsChart(standings: readonly JudgeStanding[]): string[] {
  const bound = Math.max(1, Math.ceil(Math.max(...standings.map((s) => Math.max(Math.abs(s.mean_offset), s.mean_abs_offset)))));
  const labels = standings.map((s) => `"${mermaidLabel(s.judge, 30)}"`).join(', ');
  return [
    '```mermaid',
    'xychart-beta',
    '  title "Mean offset from the consensus (below 0: harsher)"',
    `  x-axis [${labels}]`,
    `  y-axis "points" -${bound} --> ${bound}`,
    `  bar [${standings.map((s) => s.mean_offset.toFixed(2)).join(', ')}]`,
    `  line [${standings.map((s) => s.mean_abs_offset.toFixed(2)).join(', ')}]`,
    '```',
    '',
    '_Bars: mean offset; line: mean absolute offset._',
  ];
}

/** SUMMARY.md's judge-quality part: agreement per criterion and round, each judge against the consensus. */
export function qualitySection(summary: SessionSummary, ids: readonly string[]): string[] {
  const lines = ['## Judge agreement', ''];
  if (!summary.rounds.some((r) => r.agreement)) return [...lines, '_No round had a usable judge._', ''];
  lines.push(
    'Scores of the usable judges per criterion (lowest–highest), and how many agree on pass (7 or more) or fail.',
    '',
    ...agreementTable(summary, ids),
    '',
  );
  if (summary.judge_standings.length > 0) {
    lines.push(
      '## Judges against the consensus',
      '',
      "Offset = the judge's score minus the round's consensus score, per criterion.",
      '',
      ...standingsTable(summary.judge_standings),
      '',
      ...standingsChart(summary.judge_standings),
      '',
    );
  }
  return lines;
}

function schemaCell(schema: AnswerStats['backends'][number]['schema']): string {
  const parts = Object.entries(schema).map(([via, n]) => `${via} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'no schema';
}

/** How the answers came back: per backend the schema's route and the first tries that were usable; what degraded. */
export function answersSection(answers: AnswerStats): string[] {
  const pct = answers.first_try > 0 ? ` (${Math.round((100 * answers.first_try_valid) / answers.first_try)}%)` : '';
  const lines = [
    '## Answers',
    '',
    `First tries usable as they came: ${answers.first_try_valid} of ${answers.first_try}${pct}; repair calls: ${answers.repairs}; degraded artifacts: ${answers.degraded_artifacts.length}.`,
    '',
  ];
  if (answers.backends.length > 0) {
    lines.push(
      '| backend | calls | answer schema | first tries usable |',
      '| --- | ---: | --- | ---: |',
      ...answers.backends.map(
        (b) => `| ${mdCell(b.backend)} | ${b.calls} | ${mdCell(schemaCell(b.schema))} | ${b.first_try_valid}/${b.first_try} |`,
      ),
      '',
    );
  }
  if (answers.degraded_artifacts.length > 0) lines.push('Degraded:', '', ...answers.degraded_artifacts.map((f) => `- ${mdCell(f)}`), '');
  return lines;
}
