// The two Mermaid diagrams of the report: a per-agent timeline of answers and votes, and who voted for whom.
import type { TurnAnalysis } from './analysis-model.ts';
import { mermaidLabel } from '../../security/markdown-escape.ts';

function clockOf(seconds: number): string {
  const s = Math.max(0, Math.min(86_399, Math.round(seconds)));
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

/** Tick steps in seconds, each a whole number of a Mermaid tickInterval unit. */
const TICK_STEPS: Array<[number, string]> = [
  [1, '1second'],
  [2, '2second'],
  [5, '5second'],
  [10, '10second'],
  [15, '15second'],
  [30, '30second'],
  [60, '1minute'],
  [120, '2minute'],
  [300, '5minute'],
  [600, '10minute'],
  [900, '15minute'],
  [1800, '30minute'],
  [3600, '1hour'],
  [7200, '2hour'],
  [10_800, '3hour'],
  [21_600, '6hour'],
];

/**
 * The axis of a timeline spanning `span` seconds: at most about 10 ticks, each a whole number of seconds
 * apart (left to itself, d3 ticks a few seconds' run every 200 ms, and %S prints each second 5 times),
 * labelled to the second, without hours below an hour.
 */
export function timelineAxis(span: number): { tickInterval: string; axisFormat: string } {
  const step = TICK_STEPS.find(([seconds]) => span / seconds <= 10) ?? (TICK_STEPS.at(-1) as [number, string]);
  return { tickInterval: step[1], axisFormat: span < 3600 ? '%M:%S' : '%H:%M:%S' };
}

/** Gantt chart with one section per agent; answers and votes are milestones at seconds since the start. */
export function timelineDiagram(a: TurnAnalysis): string | null {
  const items = [
    ...a.answers.map((x) => ({ agent: x.agentId, at: x.at, name: `answer ${x.label}` })),
    ...a.votes.map((v) => ({
      agent: v.voterId,
      at: v.at,
      name: `vote for ${v.votedForLabel ?? v.votedFor}${v.superseded ? ' (superseded)' : ''}`,
    })),
  ].filter((x): x is { agent: string; at: number; name: string } => x.at !== null);
  if (items.length === 0) return null;
  // Each milestone lasts 1 s, so the axis runs a second past the last one.
  const axis = timelineAxis(Math.max(...items.map((x) => x.at)) + 1);
  const lines = [
    'gantt',
    `    title Answers and votes per agent (${axis.axisFormat === '%M:%S' ? 'mm:ss' : 'hh:mm:ss'} since start)`,
    '    dateFormat HH:mm:ss',
    `    axisFormat ${axis.axisFormat}`,
    `    tickInterval ${axis.tickInterval}`,
  ];
  let n = 0;
  for (const agent of a.agents.map((g) => g.id)) {
    const mine = items.filter((x) => x.agent === agent).sort((x, y) => x.at - y.at);
    if (mine.length === 0) continue;
    lines.push(`    section ${mermaidLabel(agent)}`);
    for (const item of mine) {
      n += 1;
      lines.push(`    ${mermaidLabel(item.name)} :milestone, m${n}, ${clockOf(item.at)}, 1s`);
    }
  }
  return lines.join('\n');
}

/** Flowchart: an edge from voter to voted-for agent per vote, dashed when superseded by a later vote. */
export function voteGraph(a: TurnAnalysis): string | null {
  if (a.votes.length === 0) return null;
  const ids = [...new Set([...a.agents.map((g) => g.id), ...a.votes.flatMap((v) => [v.voterId, v.votedFor])])].sort();
  const node = (id: string): string => `n${ids.indexOf(id)}`;
  const lines = ['flowchart LR'];
  for (const id of ids) lines.push(`    ${node(id)}["${mermaidLabel(id)}${id === a.winner.agentId ? ' (winner)' : ''}"]`);
  for (const v of a.votes) {
    const label = mermaidLabel(v.votedForLabel ?? v.votedFor);
    lines.push(
      v.superseded
        ? `    ${node(v.voterId)} -.->|"${label} superseded"| ${node(v.votedFor)}`
        : `    ${node(v.voterId)} -->|"${label}"| ${node(v.votedFor)}`,
    );
  }
  return lines.join('\n');
}
