/** Text forms of a stage graph (pure). */

export interface GraphView {
  nodes: Array<{ id: string; label: string; kind: 'task' | 'run' | 'loop' }>;
  /** [from dependency, to dependent] */
  edges: Array<[string, string]>;
}

function mermaidId(id: string, index: Map<string, string>): string {
  let v = index.get(id);
  if (!v) {
    v = `n${index.size}`;
    index.set(id, v);
  }
  return v;
}

function mermaidLabel(text: string): string {
  return text.replace(/"/g, '#quot;');
}

export function toMermaid(view: GraphView): string {
  const index = new Map<string, string>();
  const lines = ['flowchart LR'];
  for (const n of view.nodes) {
    const id = mermaidId(n.id, index);
    const label = mermaidLabel(n.label);
    lines.push(n.kind === 'loop' ? `  ${id}{{"${label}"}}` : n.kind === 'run' ? `  ${id}["${label}"]` : `  ${id}("${label}")`);
  }
  for (const [from, to] of view.edges) lines.push(`  ${mermaidId(from, index)} --> ${mermaidId(to, index)}`);
  return `${lines.join('\n')}\n`;
}

function dotQuote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function toDot(view: GraphView, name: string): string {
  const lines = [`digraph ${dotQuote(name)} {`, '  rankdir=LR;'];
  for (const n of view.nodes)
    lines.push(
      `  ${dotQuote(n.id)} [label=${dotQuote(n.label)}, shape=${n.kind === 'loop' ? 'hexagon' : n.kind === 'run' ? 'box' : 'ellipse'}];`,
    );
  for (const [from, to] of view.edges) lines.push(`  ${dotQuote(from)} -> ${dotQuote(to)};`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
