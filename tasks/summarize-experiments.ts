// summarize-experiments: every cell of an experiment grid -> experiments.json (schema experiments) + EXPERIMENTS.md.
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { foreachEffects } from '../src/engine/pipeline/foreach-files.ts';
import type { ExperimentRecord } from '../src/workflows/massgen/experiments/experiment-record.ts';
import { type CellAnalysis, gridCell, gridSummary, type GridCell } from '../src/workflows/massgen/experiments/grid-summary.ts';
import { renderGrid } from '../src/workflows/massgen/experiments/render-grid.ts';
import { defineTask } from '../src/task/define-task.ts';

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export default defineTask({
  name: 'summarize-experiments',
  description: 'Add up an experiment grid: per cell the winner, answers, votes, duration, cost and errors; per config the totals; a chart',
  params: z.object({
    configs: z.string().min(1).describe('The configs as the pipeline was given them: a glob or a comma list'),
    questions: z.string().default('').describe('A file of questions, one per line'),
    question: z.string().default('').describe('One question (used instead of questions when given)'),
    repeat: z.number().int().min(1).default(1),
  }),
  outputs: {
    summary: { schema: 'experiments', description: 'experiments.json' },
    report: { description: 'EXPERIMENTS.md' },
  },
  async run(ctx) {
    const { params } = ctx;
    // The grid as the pipeline's foreach made it, with the same functions (glob, lines).
    const files = foreachEffects(ctx.root, params);
    const configs = files.glob(params.configs.split(',').filter((s) => s !== ''));
    const questions = params.question !== '' ? [params.question] : files.lines(params.questions);
    const cells: GridCell[] = [];
    for (const rel of ctx.inputs.filter((f) => f.endsWith('/experiment.json'))) {
      const record = await readJson<ExperimentRecord>(path.join(ctx.root, rel));
      if (!record || !configs.includes(record.config) || !questions.includes(record.question) || record.repeat > params.repeat) continue;
      const analysisRel = `${path.posix.dirname(rel)}/analysis.json`;
      const analysis = record.ok ? await readJson<CellAnalysis>(path.join(ctx.root, analysisRel)) : undefined;
      cells.push(gridCell(record, analysis, { experiment: rel, analysis: analysis ? analysisRel : null }));
    }
    cells.sort(
      (a, b) => a.config.localeCompare(b.config) || questions.indexOf(a.question) - questions.indexOf(b.question) || a.repeat - b.repeat,
    );
    const summary = gridSummary({ configs, questions, repeat: params.repeat }, cells);
    const { summary: summaryPath, report: reportPath } = ctx.outputs;
    if (!summaryPath || !reportPath) throw new Error('summarize-experiments: the stage must declare the outputs "summary" and "report"');
    await mkdir(path.dirname(summaryPath), { recursive: true });
    await writeFile(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
    await writeFile(reportPath, renderGrid(summary));
    const t = summary.totals;
    return { summary: `${t.cells} cells: ${t.succeeded} ok, ${t.failed} failed, ${t.missing} not run` };
  },
});
