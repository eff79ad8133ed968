import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { StageState } from '../../engine/state/stage-state.ts';
import { stateWarn } from '../state-report.ts';
import { remoteCacheLine } from '../../engine/events/console-sink.ts';
import type { RemoteCacheSummary } from '../../engine/types/events.ts';

const USAGE = `Usage: refinery status [--runs N] [--json]

Shows the last runs (newest first) and, per pipeline, each stage's last successful run.`;

interface RunSummary {
  runId: string;
  pipeline: string;
  status: string;
  durationMs?: number;
  counts?: Record<string, number>;
  remote?: RemoteCacheSummary;
  finishedAt?: string;
}

function readRuns(root: string, limit: number): RunSummary[] {
  const dir = path.join(root, '.refinery', 'runs');
  let ids: string[] = [];
  try {
    ids = readdirSync(dir).sort().reverse().slice(0, limit);
  } catch {
    return [];
  }
  return ids.map((runId) => {
    try {
      return JSON.parse(readFileSync(path.join(dir, runId, 'summary.json'), 'utf8')) as RunSummary;
    } catch {
      // No summary: the run was killed or is still going. Its first event names the pipeline.
      let pipeline = '?';
      try {
        const first = readFileSync(path.join(dir, runId, 'events.jsonl'), 'utf8').split('\n')[0] ?? '';
        pipeline = (JSON.parse(first) as { pipeline?: string }).pipeline ?? '?';
      } catch {
        /* empty log */
      }
      return { runId, pipeline, status: 'incomplete (killed, or still running)' };
    }
  });
}

function pipelinesWithState(root: string): string[] {
  try {
    return (
      readdirSync(path.join(root, '.refinery', 'state'))
        // Beside the stage journals (<pipeline>.jsonl) lie the plan records (plan-<hash>.jsonl): not journals.
        .filter((f) => f.endsWith('.jsonl') && !/^plan-[0-9a-f]{16}\.jsonl$/.test(f))
        .map((f) => f.slice(0, -6))
        .sort()
    );
  } catch {
    return [];
  }
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { runs: { type: 'string', default: '10' }, json: { type: 'boolean', default: false } } });
  } catch (error) {
    io.stderr.write(`refinery status: ${(error as Error).message}\n`);
    return 2;
  }
  const runs = readRuns(io.cwd, Number(parsed.values.runs) || 10);
  const stages = Object.fromEntries(
    pipelinesWithState(io.cwd).map((p) => [
      p,
      new StageState(io.cwd, p, stateWarn(io))
        .all()
        .map((r) => ({
          stage: r.stage,
          finishedAt: r.finishedAt,
          durationMs: r.durationMs,
          runId: r.runId,
          outputs: Object.keys(r.outputs),
        }))
        .sort((a, b) => (a.stage < b.stage ? -1 : 1)),
    ]),
  );
  if (parsed.values.json) {
    io.stdout.write(`${JSON.stringify({ runs, stages }, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) io.stdout.write('No runs yet in this project.\n');
  else {
    io.stdout.write('Last runs:\n');
    for (const r of runs) {
      const counts = r.counts
        ? Object.entries(r.counts)
            .filter(([, n]) => n > 0)
            .map(([k, n]) => `${n} ${k === 'fresh' ? 'up to date' : k}`)
            .join(', ')
        : '';
      io.stdout.write(
        `  ${r.runId}  ${r.pipeline}  ${r.status}${r.durationMs !== undefined ? `  ${(r.durationMs / 1000).toFixed(2)}s` : ''}${counts ? `  (${counts})` : ''}\n`,
      );
      if (r.remote) io.stdout.write(`    ${remoteCacheLine(r.remote)}\n`);
    }
  }
  for (const [pipeline, list] of Object.entries(stages)) {
    io.stdout.write(`\nPipeline ${pipeline}: ${list.length} stage${list.length === 1 ? '' : 's'} with a recorded success\n`);
    for (const s of list.slice(0, 50))
      io.stdout.write(`  ${s.stage}  last succeeded ${s.finishedAt} in ${(s.durationMs / 1000).toFixed(2)}s\n`);
    if (list.length > 50) io.stdout.write(`  … and ${list.length - 50} more (--json for all)\n`);
  }
  return 0;
}

export const statusCommand: Command = { name: 'status', summary: 'Show runs and stage states', usage: USAGE, run };
