// RUNS_SUMMARY.md from runs-summary.json: tables, and trends as Mermaid charts GitHub renders
// (xychart-beta, pie). Every number is read from the summary; every value from the logs is escaped.
import { mdCell, mdCode, mdText, mermaidLabel } from '../../security/markdown-escape.ts';
import type { GroupRow, RunRef, RunsSummary } from './runs-summary-model.ts';

const int = (n: number): string => n.toLocaleString('en-US');
const money = (n: number | null): string => (n === null ? '-' : `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2)}`);
const pct = (x: number | null): string => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);

export function duration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m} min ${Math.round(seconds % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A relative link target: every segment percent-encoded, parentheses too (they would end the link). */
function href(relPath: string): string {
  return relPath
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/\(/g, '%28').replace(/\)/g, '%29'))
    .join('/');
}

function runLink(r: { session: string; turn: number; report: string }): string {
  return `[${mdText(`${r.session} turn ${r.turn}`)}](${href(r.report)})`;
}

function table(head: string[], rows: string[][]): string[] {
  if (rows.length === 0) return ['_None._', ''];
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`), ''];
}

function xyChart(title: string, axis: string, labels: string[], values: number[]): string[] {
  if (labels.length === 0) return [];
  const x = labels.map((l) => `"${mermaidLabel(l, 30)}"`).join(', ');
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${mermaidLabel(title)}"`,
    `  x-axis [${x}]`,
    `  y-axis "${mermaidLabel(axis)}"`,
    `  bar [${values.map((v) => String(v)).join(', ')}]`,
    '```',
    '',
  ];
}

function pie(title: string, slices: [string, number][]): string[] {
  const kept = slices.filter(([, n]) => n > 0);
  if (kept.length === 0) return [];
  return ['```mermaid', `pie title ${mermaidLabel(title)}`, ...kept.map(([label, n]) => `  "${mermaidLabel(label)}" : ${n}`), '```', ''];
}

function runTable(runs: RunRef[]): string[] {
  return table(
    ['Run', 'Date', 'State', 'Cost', 'Wall clock', 'Question'],
    runs.map((r) => [
      runLink(r),
      mdCell(r.date),
      mdCell(r.state),
      money(r.costUsd),
      duration(r.wallClockSeconds),
      mdCell(r.question ? (r.question.length > 60 ? `${r.question.slice(0, 57)}...` : r.question) : null),
    ]),
  );
}

function groupTable(rows: GroupRow[], by: string): string[] {
  return table(
    [
      by === 'config' ? 'Config' : by === 'agent' ? 'Agent' : 'Model',
      'Runs',
      'Agent runs',
      'Answers',
      'Votes cast',
      'Wins',
      'Restarts',
      'Enforcement retries',
      'Lost buffer chars',
      'API errors',
      'Agent cost',
    ],
    rows.map((g) => [
      mdCell(g.key),
      int(g.turns),
      int(g.agentRuns),
      int(g.answers),
      int(g.votesCast),
      int(g.wins),
      int(g.restarts),
      int(g.enforcementRetries),
      int(g.bufferCharsLost),
      int(g.apiErrors),
      money(g.costUsd),
    ]),
  );
}

function totalsSection(s: RunsSummary): string[] {
  const t = s.totals;
  return [
    '## Totals',
    '',
    ...table(
      ['Figure', 'Value'],
      [
        ['Runs (turns)', int(t.turns)],
        ['Log folders (log_*)', int(t.sessions)],
        ['Agent runs (agents × runs)', int(t.agentRuns)],
        ['Cost', `${money(t.costUsd)} (${int(t.turnsWithCost)} runs with a cost; agents ${money(t.agentCostUsd)})`],
        ['Wall clock', `${duration(t.wallClockSeconds)} (${int(t.turnsWithDuration)} runs with a duration)`],
        ['Answers', int(t.answers)],
        ['Votes', int(t.votes)],
        ['Re-votes', int(t.reVotes)],
        ['Agent restarts', int(t.restarts)],
        ['Orchestration restarts', int(t.orchestrationRestarts)],
        ['Enforcement retries', int(t.enforcementRetries)],
        ['Lost buffer characters', int(t.bufferCharsLost)],
        ['API errors', int(t.apiErrors)],
        ['Denied tool calls', int(t.deniedToolCalls ?? 0)],
        ['Runs with a winner', int(t.turnsWithWinner)],
        ['Unanimous votes', `${int(t.unanimousTurns)} of ${int(t.votedTurns)} voted runs (${pct(t.unanimousRate)})`],
      ],
    ),
    ...table(
      ['State', 'Runs'],
      s.states.map((x) => [mdCell(x.state), int(x.turns)]),
    ),
  ];
}

function daySection(s: RunsSummary): string[] {
  const days = s.perDay;
  const shown = days.slice(-60);
  return [
    '## Per day',
    '',
    ...table(
      ['Date', 'Log folders', 'Runs', 'Agent runs', 'Cost'],
      days.map((d) => [mdCell(d.date), int(d.sessions), int(d.turns), int(d.agentRuns), money(d.costUsd)]),
    ),
    ...xyChart(
      days.length > shown.length ? 'Cost per day (USD), last 60 days' : 'Cost per day (USD)',
      'USD',
      shown.map((d) => d.date),
      shown.map((d) => Math.round(d.costUsd * 1e4) / 1e4),
    ),
    ...xyChart(
      days.length > shown.length ? 'Runs per day, last 60 days' : 'Runs per day',
      'runs',
      shown.map((d) => d.date),
      shown.map((d) => d.turns),
    ),
  ];
}

function durationSection(s: RunsSummary): string[] {
  const d = s.duration;
  return [
    '## Duration (wall clock per run)',
    '',
    `Median ${duration(d.p50Seconds)}, 90th percentile ${duration(d.p90Seconds)}, longest ${duration(d.maxSeconds)}; ${int(d.unknown)} run(s) without a duration.`,
    '',
    ...table(
      ['Duration', 'Runs'],
      d.buckets.map((b) => [mdCell(b.label), int(b.turns)]),
    ),
    ...xyChart(
      'Runs by duration',
      'runs',
      d.buckets.map((b) => b.label),
      d.buckets.map((b) => b.turns),
    ),
  ];
}

function reliabilitySection(s: RunsSummary): string[] {
  return [
    '## Enforcement retries',
    '',
    ...table(
      ['Reason code', 'Retries'],
      s.enforcement.byReason.map((r) => [mdCode(r.reason), int(r.retries)]),
    ),
    ...pie(
      'Enforcement retries by reason',
      s.enforcement.byReason.map((r) => [r.reason, r.retries]),
    ),
    ...table(
      ['Model', 'Backend', 'Retries'],
      s.enforcement.byModel.map((r) => [mdCell(r.model), mdCell(r.backend), int(r.retries)]),
    ),
    '## API errors by backend',
    '',
    ...table(
      ['Backend', 'Errors'],
      s.apiErrors.byBackend.map((r) => [mdCell(r.backend), int(r.errors)]),
    ),
    '## Denied tool calls by agent and tool',
    '',
    ...table(
      ['Agent', 'Tool', 'Denied'],
      (s.deniedToolCalls?.byAgentTool ?? []).map((r) => [mdCell(r.agent), mdCell(r.tool), int(r.denied)]),
    ),
    '## Lost buffer characters by model',
    '',
    ...table(
      ['Model', 'Characters'],
      s.bufferCharsLost.byModel.map((r) => [mdCell(r.model), int(r.chars)]),
    ),
  ];
}

function votingSection(s: RunsSummary): string[] {
  const t = s.totals;
  return [
    '## Winners and votes',
    '',
    `The vote was unanimous (every agent's last vote named the same agent) in ${int(t.unanimousTurns)} of ${int(t.votedTurns)} voted runs (${pct(t.unanimousRate)}).`,
    '',
    ...table(
      ['Per run', 'Total', 'Mean', 'Max'],
      [
        ['Re-votes', int(s.perRun.reVotes.total), String(s.perRun.reVotes.mean), int(s.perRun.reVotes.max)],
        ['Agent restarts', int(s.perRun.restarts.total), String(s.perRun.restarts.mean), int(s.perRun.restarts.max)],
      ],
    ),
    ...table(
      ['Winner (agent)', 'Wins'],
      s.winners.byAgent.map((w) => [mdCell(w.agent), int(w.wins)]),
    ),
    ...table(
      ['Winner (model)', 'Wins'],
      s.winners.byModel.map((w) => [mdCell(w.model), int(w.wins)]),
    ),
    ...pie(
      'Wins by model',
      s.winners.byModel.map((w) => [w.model, w.wins]),
    ),
    '## Answers per agent',
    '',
    ...table(
      ['Agent', 'Answers', 'Runs'],
      s.answersByAgent.map((a) => [mdCell(a.agent), int(a.answers), int(a.turns)]),
    ),
  ];
}

function storySection(s: RunsSummary): string[] {
  if (s.sessions.length === 0) return [];
  const out = [
    '## Sessions continued across log folders',
    '',
    'A run started with `massgen --session-id` writes a new log folder whose turns continue the session; each is linked to the folder that started it.',
    '',
  ];
  for (const story of s.sessions) {
    out.push(`### ${mdText(story.id)} (started in ${mdCode(story.startedIn)})`, '');
    for (const l of story.links) out.push(`- ${mdCode(l.folder)} continues ${mdCode(l.continues)} (${mdText(l.evidence)})`);
    out.push('');
    out.push(
      ...table(
        ['Turn', 'Log folder', 'State', 'Report'],
        story.turns.map((t) => [String(t.turn), mdCode(t.session), mdCell(t.state), runLink(t)]),
      ),
    );
  }
  return out;
}

export function renderRunsSummary(s: RunsSummary): string {
  const filter = [s.filter.since ? `since ${mdText(s.filter.since)}` : null, `grouped by ${s.filter.groupBy}`].filter(Boolean).join(', ');
  return [
    '# MassGen runs summary',
    '',
    `Logs ${mdCode(s.logs)}, ${int(s.totals.turns)} runs in ${int(s.totals.sessions)} log folders; ${filter}. Generated ${mdText(s.generatedAt)}.`,
    "A run is one turn (`turn_N`) of a log folder (`log_*`). Every number comes from the runs' `analysis.json` files; each run links to its report.",
    '',
    ...totalsSection(s),
    ...daySection(s),
    ...durationSection(s),
    `## The ${s.costliest.length} costliest runs`,
    '',
    ...runTable(s.costliest),
    `## The ${s.slowest.length} slowest runs`,
    '',
    ...runTable(s.slowest),
    ...reliabilitySection(s),
    ...votingSection(s),
    `## By ${s.groups.by}`,
    '',
    ...groupTable(s.groups.rows, s.groups.by),
    ...storySection(s),
  ].join('\n');
}
