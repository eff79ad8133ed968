// analyze-turn: one MassGen turn (every attempt) -> analysis.json (schema turn-analysis) + ANALYSIS_REPORT.md.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { analyzeTurnUnit } from '../src/workflows/massgen/analyze.ts';
import { DEFAULT_STALE_AFTER_SECONDS } from '../src/workflows/massgen/analysis-state.ts';
import { resolveTurnUnit } from '../src/workflows/massgen/discover.ts';
import { JSON_FILE_CAP } from '../src/workflows/massgen/json-file.ts';
import { defineTask } from '../src/task/define-task.ts';

const MiB = 1024 * 1024;

/**
 * The turn folder: an absolute path as given, a relative one against the project root (it may
 * leave it: logs of another checkout or a CI download are only read; the outputs are the stage's).
 */
export function resolveTurnPath(root: string, turn: string): string {
  if (turn.includes('\0')) throw new Error(`analyze-turn: param 'turn' contains a NUL byte`);
  return path.isAbsolute(turn) ? path.normalize(turn) : path.resolve(root, turn);
}

export default defineTask({
  name: 'analyze-turn',
  description: 'Analyze one MassGen turn (turn_N/ with every attempt, or a legacy flat log dir) into analysis.json and ANALYSIS_REPORT.md',
  params: z.object({
    turn: z.string().min(1).describe('Path of the turn dir (turn_N) or legacy log dir, relative to the root or absolute'),
    staleAfterSeconds: z
      .number()
      .min(0)
      .default(DEFAULT_STALE_AFTER_SECONDS)
      .describe('An unfinished run whose heartbeat is older than this is "incomplete", else "in_progress"'),
    maxJsonMb: z
      .number()
      .positive()
      .default(JSON_FILE_CAP / MiB)
      .describe(
        'End-of-run JSON files (status.json, coordination_events.json, metrics_*.json, snapshot_mappings.json) over this many MiB are skipped with a warning in analysis.json, to keep memory bounded',
      ),
  }),
  outputs: {
    analysis: { schema: 'turn-analysis', description: 'analysis.json next to the report' },
    report: { description: 'ANALYSIS_REPORT.md (log-analyzer template)' },
  },
  async run(ctx) {
    const target = resolveTurnPath(ctx.root, ctx.params.turn);
    const resolved = await resolveTurnUnit(target);
    if (!resolved.ok) throw new Error(`analyze-turn: ${resolved.reason}`);
    ctx.progress(0.1, `reading ${resolved.unit.attempts.length} attempt(s)`);
    const { analysis, report } = await analyzeTurnUnit(resolved.unit, {
      staleAfterSeconds: ctx.params.staleAfterSeconds,
      maxJsonBytes: Math.floor(ctx.params.maxJsonMb * MiB),
      lines: { signal: ctx.signal },
    });
    const analysisPath = ctx.outputs.analysis;
    const reportPath = ctx.outputs.report;
    if (!analysisPath || !reportPath) throw new Error('analyze-turn: the stage must declare the outputs "analysis" and "report"');
    await mkdir(path.dirname(analysisPath), { recursive: true });
    await mkdir(path.dirname(reportPath), { recursive: true });
    await writeFile(analysisPath, `${JSON.stringify(analysis, null, 2)}\n`);
    await writeFile(reportPath, report);
    ctx.report({ kind: 'metric', name: 'massgen.warnings', value: analysis.warnings.length });
    ctx.report({ kind: 'metric', name: 'massgen.answers', value: analysis.overview.answers });
    ctx.report({ kind: 'metric', name: 'massgen.votes', value: analysis.overview.votes });
    const warned = analysis.warnings.length
      ? `, ${analysis.warnings.length} warning${analysis.warnings.length === 1 ? '' : 's'} in analysis.json`
      : '';
    const summary = `${analysis.state.value}, winner ${analysis.winner.agentId ?? 'none'}, ${analysis.overview.answers} answers, ${analysis.overview.votes} votes${warned}`;
    return { summary };
  },
});
