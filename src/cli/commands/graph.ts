import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { openPipeline } from '../session.ts';
import { planGraph } from '../../engine/graph/plan-graph.ts';
import { toDot, toMermaid, type GraphView } from '../../engine/graph/render.ts';

const USAGE = `Usage: refinery graph [PIPELINE] [--format mermaid|dot|json] [-p KEY=VALUE]...

Prints the stage graph (foreach stages expanded; a loop is one node with its stages inside).`;

async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { format: { type: 'string', default: 'mermaid' }, param: { type: 'string', short: 'p', multiple: true, default: [] } },
    });
  } catch (error) {
    io.stderr.write(`refinery graph: ${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (!['mermaid', 'dot', 'json'].includes(values.format)) {
    io.stderr.write(`refinery graph: --format ${values.format}: expected mermaid, dot or json\n`);
    return 2;
  }
  const opened = await openPipeline(io, positionals[0], values.param);
  if (!opened) return 2;
  const { plan } = opened.expansion;
  const graph = planGraph(plan);
  const view: GraphView = {
    nodes: [
      ...plan.instances.map((i) => ({ id: i.id, label: i.spec.kind === 'task' ? `${i.id} (${i.spec.task})` : i.id, kind: i.spec.kind })),
      ...plan.loops.map((l) => ({
        id: l.id,
        label: `${l.id}: ${l.spec.stages.map((s) => s.id).join(' → ')} (max ${l.max})`,
        kind: 'loop' as const,
      })),
    ],
    edges: [...graph.deps].flatMap(([to, froms]) => froms.map((from) => [from, to] as [string, string])),
  };
  if (values.format === 'json') io.stdout.write(`${JSON.stringify({ pipeline: plan.pipeline.name, ...view }, null, 2)}\n`);
  else io.stdout.write(values.format === 'dot' ? toDot(view, plan.pipeline.name) : toMermaid(view));
  return 0;
}

export const graphCommand: Command = { name: 'graph', summary: 'Print the stage graph', usage: USAGE, run };
