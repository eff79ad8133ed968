// The two Mermaid diagrams of the report: a per-agent timeline of answers and votes, and who voted for whom.
import type { TurnAnalysis } from './analysis-model.ts';
import { mermaidLabel } from '../../security/markdown-escape.ts';

function clockOf(seconds: number): string {
  const s = Math.max(0, Math.min(86_399, Math.round(seconds)));
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
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
  const lines = ['gantt', '    title Answers and votes per agent (time since start)', '    dateFormat HH:mm:ss', '    axisFormat %H:%M:%S'];
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
