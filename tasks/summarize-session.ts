import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { resolveInside } from '../src/workflows/refine/safe-path.ts';
import { DEFAULT_SESSIONS_DIR, SESSION_NAME, sessionDir } from '../src/workflows/refine/session-layout.ts';
import { summarizeSession } from '../src/workflows/refine/session-summary.ts';
import { renderSummaryMarkdown } from '../src/workflows/refine/summary-markdown.ts';
import { nextTasksLine } from '../src/workflows/refine/task-list.ts';
import { outputPath, schemaProblems, writeJson, writeText } from '../src/workflows/refine/task-support.ts';

const params = z.strictObject({
  /** The session folder's name under sessions_dir. */
  session: SESSION_NAME.default('example'),
  sessions_dir: z.string().min(1).default(DEFAULT_SESSIONS_DIR),
  /** Judge names in registration order (default: the folders under round_NNN/judges/). */
  judges: z.array(z.string().min(1)).optional(),
  /** The loop's max_rounds and whether a worker ran between rounds: the summary counts rounds as the loop did (with a worker, max_rounds + 1). */
  max_rounds: z.int().min(1).default(3),
  worker: z.string().default(''),
});

export default defineTask({
  name: 'summarize-session',
  description:
    'Sums up a refine session: scores per criterion per round (table + Mermaid charts), verdicts and winners, next tasks, cost and tokens.',
  params,
  outputs: {
    summary: { default: '.refinery/sessions/example/summary.json', schema: 'refine-summary' },
    report: { default: '.refinery/sessions/example/SUMMARY.md', description: 'SUMMARY.md' },
  },
  async run(ctx) {
    const p = ctx.params;
    const dir = resolveInside(ctx.root, sessionDir(p.sessions_dir, p.session), 'session folder');
    const summary = summarizeSession({
      dir,
      session: p.session,
      runId: ctx.runId,
      maxRounds: p.max_rounds,
      hasWorker: p.worker.trim() !== '',
      ...(p.judges ? { judges: p.judges } : {}),
      validate: (schema, data) => schemaProblems(ctx.root, schema, data),
    });
    const problems = schemaProblems(ctx.root, 'refine-summary', summary);
    if (problems) throw new Error(`summarize-session produced an invalid summary.json (${problems}); this is a bug`);
    writeJson(outputPath(ctx, 'summary'), summary);
    writeText(outputPath(ctx, 'report'), renderSummaryMarkdown(summary));
    for (const w of summary.warnings) ctx.report({ kind: 'warning', message: w });
    for (const t of summary.next_tasks) ctx.log(`next task ${t.id}: ${t.description}`);
    for (const b of summary.answers.backends) {
      const routes =
        Object.entries(b.schema)
          .map(([via, n]) => `${via} ${n}`)
          .join(', ') || 'no schema';
      ctx.log(
        `answers from ${b.backend}: ${b.calls} calls, answer schema ${routes}; ${b.first_try_valid}/${b.first_try} first tries usable`,
      );
    }
    for (const s of summary.judge_standings)
      ctx.log(`judge ${s.judge}: mean offset from the consensus ${s.mean_offset}, mean |offset| ${s.mean_abs_offset} (${s.rounds} rounds)`);
    const n = summary.rounds.length;
    const verdict = `${(summary.final_verdict ?? 'no verdict').toUpperCase()} after ${n} round${n === 1 ? '' : 's'} (${summary.stopped.reason.replace('_', ' ')})`;
    const next = nextTasksLine(summary.next_tasks, 40);
    const cost = `$${summary.usage.total.cost_usd.toFixed(4)}, $${summary.usage.this_run.cost_usd.toFixed(4)} this run`;
    return {
      summary: [verdict, next, cost].filter(Boolean).join('; '),
      ...(summary.warnings.length ? { warnings: summary.warnings } : {}),
    };
  },
});
