import type { RoundSummary, SessionSummary, StopReason } from './session-summary.ts';
import { oneLine, type TaskLine } from './task-list.ts';
import type { UsageTotals } from './usage.ts';
import { mdCell, mdText, mermaidLabel } from '../../security/markdown-escape.ts';
import { answersSection, qualitySection } from './quality-markdown.ts';

const STOPPED: Record<StopReason, string> = {
  converged: 'the judges converged',
  max_rounds: 'max_rounds was reached',
  no_worker: 'no worker is configured, so the loop stops after the first evaluation',
  incomplete: 'the run did not finish the next round (see the run log)',
};

/** Model prose (a task's description) on one line: Markdown by intent, but it must not split a row or a list item. */
function oneLineProse(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
}

/** The aspect name of a criterion ("Clarity: ..." -> "Clarity"), short enough for a chart title. */
function aspect(text: string): string {
  const head = text.split(':')[0] ?? text;
  return oneLine(head, 48);
}

function usd(value: number): string {
  return `$${value.toFixed(4)}`;
}

function criterionIds(summary: SessionSummary): string[] {
  if (summary.criteria.length > 0) return summary.criteria.map((c) => c.id);
  const ids = new Set(summary.rounds.flatMap((r) => Object.keys(r.scores)));
  return [...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

function scoreTable(summary: SessionSummary, ids: readonly string[]): string[] {
  const head = `| criterion | ${summary.rounds.map((r) => `round ${r.round}`).join(' | ')} |`;
  const rule = `| --- | ${summary.rounds.map(() => '---:').join(' | ')} |`;
  const rows = ids.map((id) => {
    const c = summary.criteria.find((x) => x.id === id);
    const name = c
      ? `**${mdText(id)}** ${mdCell(aspect(c.text))}${c.category === 'standard' ? '' : ` (${mdText(c.category)})`}`
      : `**${mdText(id)}**`;
    return `| ${name} | ${summary.rounds.map((r) => (r.scores[id] === undefined ? '–' : String(r.scores[id]))).join(' | ')} |`;
  });
  return [head, rule, ...rows];
}

/** One Mermaid xychart-beta line chart per criterion (GitHub renders these); a missing score is drawn as 0. */
function charts(summary: SessionSummary, ids: readonly string[]): string[] {
  const out: string[] = [];
  const labels = summary.rounds.map((r) => `"R${r.round}"`).join(', ');
  for (const id of ids) {
    const c = summary.criteria.find((x) => x.id === id);
    const title = mermaidLabel(`${id} ${c ? aspect(c.text) : ''}`, 60);
    const values = summary.rounds.map((r) => String(r.scores[id] ?? 0)).join(', ');
    out.push(
      '```mermaid',
      'xychart-beta',
      `  title "${title}"`,
      `  x-axis [${labels}]`,
      '  y-axis "score" 0 --> 10',
      `  line [${values}]`,
      '```',
      '',
    );
  }
  return out;
}

/** Why the loop stopped; a converged verdict from a forced consensus is not "the judges converged". */
function stoppedText(summary: SessionSummary): string {
  const last = summary.rounds.at(-1);
  if (summary.stopped.reason === 'converged' && last?.forced)
    return `the verdict of round ${last.round} is converged, from a forced consensus (not an agreement of the judges)`;
  return STOPPED[summary.stopped.reason];
}

/** Each round's consensus in words, and the answers judges gave in later consensus rounds (where the scores may come from). */
function consensusSection(summary: SessionSummary, ids: readonly string[]): string[] {
  const rounds = summary.rounds.filter((r) => r.decision);
  if (rounds.length === 0) return [];
  const out = ['## Consensus', ''];
  for (const r of rounds) {
    out.push(`- **Round ${r.round}**: ${mdText(r.decision ?? '')}`);
    if (!r.new_answers?.length) continue;
    out.push(
      '',
      `  Answers the judges gave anew instead of voting, in the consensus of round ${r.round} (consensus round 1 is their evaluations, in the scores above):`,
      '',
      `  | judge | consensus round | verdict | ${ids.map(mdText).join(' | ')} | used |`,
      `  | --- | ---: | --- | ${ids.map(() => '---:').join(' | ')} | --- |`,
      ...r.new_answers.map((a) => {
        const used = r.source?.judge === a.judge && r.source.step === a.step ? 'verdict and scores' : '';
        return `  | ${mdCell(a.judge)} | ${a.round} | ${a.verdict}${a.status === 'degraded' ? ' (degraded)' : ''} | ${ids.map((id) => a.scores[id] ?? '–').join(' | ')} | ${used} |`;
      }),
      '',
    );
  }
  return [...out, ''];
}

function judgesCell(r: RoundSummary): string {
  return r.judges.map((j) => `${j.name}: ${j.status === 'ok' ? j.verdict : j.status}`).join(', ') || '–';
}

function roundsTable(summary: SessionSummary): string[] {
  const rows = summary.rounds.map((r) => {
    const verdict = r.status === 'degraded' ? `${r.verdict} (degraded)` : r.verdict;
    const rule = r.decided_by && r.decided_by !== r.mode ? `, ${r.decided_by.replace('_', ' ')}` : '';
    const how =
      r.mode === 'vote'
        ? `vote${r.forced ? ` (forced: ${r.forced_reason ?? '?'}${rule})` : rule ? ` (${rule.slice(2)})` : ''}`
        : (r.mode ?? '–');
    const worker = r.worker ? `${r.worker.agent}: ${r.worker.status} (job ${r.worker.job_id})` : '–';
    const tasks = r.next_tasks.map((t) => t.id).join(', ') || '–';
    return `| ${r.round} | ${mdCell(verdict)} | ${mdCell(how)} | ${mdCell(r.winner ?? '–')} | ${mdCell(judgesCell(r))} | ${mdCell(tasks)} | ${mdCell(worker)} | ${usd(r.usage.cost_usd)} |`;
  });
  return [
    '| round | verdict | consensus | winner | judges | next tasks | worker | cost |',
    '| ---: | --- | --- | --- | --- | --- | --- | ---: |',
    ...rows,
  ];
}

function taskList(tasks: readonly TaskLine[]): string[] {
  return tasks.map((t, i) => {
    const notes = [t.priority !== undefined ? `priority ${t.priority}` : '', t.relates_to?.length ? t.relates_to.join(', ') : '']
      .filter(Boolean)
      .join('; ');
    return `${i + 1}. **${mdText(t.id)}** ${oneLineProse(t.description)}${notes ? ` _(${mdText(notes)})_` : ''}`;
  });
}

function usageRow(label: string, t: UsageTotals): string {
  return `| ${label} | ${t.calls} | ${t.cached_calls} | ${t.input_tokens} | ${t.output_tokens} | ${usd(t.cost_usd)} | ${usd(t.original_cost_usd)} |`;
}

function usageSection(summary: SessionSummary): string[] {
  return [
    '| | calls | from cache | input tokens | output tokens | cost | original cost |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    usageRow('this run', summary.usage.this_run),
    usageRow('whole session', summary.usage.total),
    '',
    '_cost_ is what the calls cost in the run that made each artifact (a call served from the response cache costs $0); ' +
      '_original cost_ is what they cost when first made.',
  ];
}

/** SUMMARY.md: verdicts, scores (table and charts), next tasks, cost and tokens. */
export function renderSummaryMarkdown(summary: SessionSummary): string {
  const ids = criterionIds(summary);
  const n = summary.rounds.length;
  const verdict = summary.final_verdict ? `**${summary.final_verdict.toUpperCase()}**` : '**no verdict**';
  const lines = [
    `# Refine session \`${summary.session}\``,
    '',
    `${verdict} after ${n} round${n === 1 ? '' : 's'}: stopped because ${stoppedText(summary)}.`,
  ];
  const last = summary.rounds.at(-1);
  if (last?.decision) lines.push(`**Round ${last.round}'s consensus**: ${mdText(last.decision)}`);
  if (summary.regression)
    lines.push(`Regression guard: ${summary.regression.status === 'ok' ? summary.regression.result : summary.regression.status}.`);
  lines.push('', '## Scores per criterion', '');
  if (n === 0) lines.push('_No round finished._', '');
  else lines.push(...scoreTable(summary, ids), '', ...charts(summary, ids));
  lines.push('## Rounds', '', ...(n === 0 ? ['_No round finished._'] : roundsTable(summary)), '');
  if (summary.stopped.reason === 'max_rounds' && n > 1)
    lines.push(
      `Round ${n} is the final evaluation: it scored the worker's changes after round ${n - 1}, the last round handed to the worker (max_rounds ${n - 1}).`,
      '',
    );
  lines.push(...consensusSection(summary, ids));
  lines.push(...qualitySection(summary, ids));
  lines.push(`## Next tasks${last ? ` (round ${last.round})` : ''}`, '');
  if (summary.next_tasks.length > 0) lines.push(...taskList(summary.next_tasks));
  else
    lines.push(
      summary.final_verdict === 'converged' ? '_None: the verdict is converged._' : "_None usable: see the round's critique_packet.md._",
    );
  lines.push('', ...answersSection(summary.answers), '## Cost and tokens', '', ...usageSection(summary), '');
  if (summary.warnings.length > 0) lines.push('## Warnings', '', ...summary.warnings.map((w) => `- ${mdText(w)}`), '');
  return `${lines.join('\n')}\n`;
}
