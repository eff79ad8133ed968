// summarize-runs: every turn's analysis.json under a logs folder -> runs-summary.json (schema
// runs-summary) + RUNS_SUMMARY.md. Unchanged analyses are not read again (a digest cache by stat
// and content hash under .refinery/cache/massgen-summary/).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DigestCache } from '../src/workflows/massgen/digest-cache.ts';
import { logsProblem, sessionNames } from '../src/workflows/massgen/logs-folder.ts';
import { buildRunsSummary } from '../src/workflows/massgen/runs-summary-build.ts';
import { GROUP_BYS } from '../src/workflows/massgen/runs-summary-model.ts';
import { defineTask } from '../src/task/define-task.ts';

const params = z.strictObject({
  logs: z.string().min(1).describe('The MassGen logs folder (the one holding log_* dirs), relative to the project or absolute'),
  reports: z
    .string()
    .min(1)
    .describe(
      'The folder the per-turn analyses mirror the logs in (the logs folder itself when they sit beside the turns); the summary is written here',
    ),
  since: z
    .string()
    .regex(/^(\d{4}-\d{2}-\d{2})?$/, 'expected a date YYYY-MM-DD, or empty for every run')
    .default('')
    .describe('Only runs on or after this day (YYYY-MM-DD); empty: every run'),
  group_by: z
    .enum(GROUP_BYS as [string, ...string[]])
    .default('model')
    .describe('The per-group table: model, agent or config'),
});

export default defineTask({
  name: 'summarize-runs',
  description: 'Adds up every MassGen turn analysis (analysis.json) under a logs folder into runs-summary.json and RUNS_SUMMARY.md',
  params,
  outputs: {
    summary: { default: '.massgen/massgen_logs/runs-summary.json', schema: 'runs-summary', description: 'runs-summary.json' },
    report: { default: '.massgen/massgen_logs/RUNS_SUMMARY.md', description: 'RUNS_SUMMARY.md: tables and Mermaid charts' },
  },
  /** A logs folder that does not exist or holds no MassGen run stops the run before it starts. */
  async preflight(p, ctx) {
    const problem = await logsProblem(path.resolve(ctx.root, p.logs), p.logs);
    return problem ? [problem] : [];
  },
  async run(ctx) {
    const p = ctx.params;
    const reportsRoot = path.resolve(ctx.root, p.reports);
    const cache = new DigestCache(path.join(ctx.cacheDir('massgen-summary'), 'digests.json'));
    const files = ctx.inputs.map((f) => path.resolve(ctx.root, f));
    const built = buildRunsSummary(files, cache, {
      logs: p.logs,
      reportsRoot,
      sessions: await sessionNames(path.resolve(ctx.root, p.logs)),
      since: p.since === '' ? null : p.since,
      groupBy: p.group_by as 'model' | 'agent' | 'config',
    });
    cache.save();
    const summaryPath = ctx.outputs.summary;
    const reportPath = ctx.outputs.report;
    if (!summaryPath || !reportPath) throw new Error('summarize-runs: the stage must declare the outputs "summary" and "report"');
    await writeFile(summaryPath, `${JSON.stringify(built.summary, null, 2)}\n`);
    await writeFile(reportPath, `${built.markdown}\n`);
    for (const x of built.problems)
      ctx.report({ kind: 'warning', message: `${path.relative(ctx.root, x.file)}: ${x.problem}; left out of the summary` });
    ctx.report({ kind: 'metric', name: 'massgen.summary.parsed', value: cache.stats.parsed });
    ctx.report({ kind: 'metric', name: 'massgen.summary.cached', value: cache.stats.cached + cache.stats.hashed });
    const t = built.summary.totals;
    return {
      summary: `${t.turns} runs in ${t.sessions} log folders, $${t.costUsd.toFixed(2)}; ${cache.stats.parsed} analyses read, ${cache.stats.cached + cache.stats.hashed} unchanged`,
    };
  },
});
