import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { checkBackends } from '../src/workflows/backends/preflight.ts';
import { readCriteriaParam } from '../src/workflows/refine/criteria-input.ts';
import { readDeliverable, renderDeliverable } from '../src/workflows/refine/deliverable.ts';
import { degradedFiles, type EvaluationFiles } from '../src/workflows/refine/evaluation-files.ts';
import { judgeEvaluation } from '../src/workflows/refine/judge-evaluation.ts';
import { evalPrompt } from '../src/workflows/refine/prompts/eval-prompt.ts';
import { resolveInside } from '../src/workflows/refine/safe-path.ts';
import {
  llmClientFor,
  llmParamShape,
  outputPath,
  schemaProblems,
  writeJson,
  writeText,
  writeUsageIfDeclared,
} from '../src/workflows/refine/task-support.ts';
import { UsageRecorder } from '../src/workflows/refine/usage.ts';

const params = z.strictObject({
  /** Backend name from refinery.config.yaml; one stage per judge. */
  backend: z.string().min(1),
  /** criteria.json (from generate-criteria, or any MassGen criteria file). */
  criteria: z.string().min(1),
  /** Deliverable files or directories; default: the stage's inputs minus criteria and history. */
  deliverable: z.array(z.string().min(1)).optional(),
  task: z.string().min(1).optional(),
  task_file: z.string().min(1).optional(),
  round: z.coerce.number().int().min(1).default(1),
  /** Earlier rounds' critique_packet.md files, oldest first (a `round_NNN/` folder names the round). */
  history: z.array(z.string().min(1)).default([]),
  max_file_bytes: z.int().min(1).default(100_000),
  max_total_bytes: z.int().min(1).default(400_000),
  ...llmParamShape,
});

/** The round a history file belongs to, from its `round_NNN` folder. */
function roundOf(file: string): number | undefined {
  const match = /(?:^|\/)round_(\d+)\//.exec(file.replaceAll('\\', '/'));
  return match ? Number(match[1]) : undefined;
}

/** Replaces any artifact that would break its schema with the degraded triple (never an invalid file in place). */
function guarded(root: string, files: EvaluationFiles, judge: { backend: string; model?: string }, round: number): EvaluationFiles {
  const problems = schemaProblems(root, 'verdict', files.verdict) ?? schemaProblems(root, 'next-tasks', files.nextTasks);
  return problems ? degradedFiles(`internal: artifact failed its schema (${problems})`, files.packet, judge, round) : files;
}

export default defineTask({
  name: 'evaluate-backend',
  description: 'One backend evaluates the deliverable against the criteria: verdict.json, critique_packet.md, next_tasks.json.',
  params,
  outputs: {
    verdict: { default: 'refine/verdict.json', schema: 'verdict' },
    critique: { default: 'refine/critique_packet.md' },
    next_tasks: { default: 'refine/next_tasks.json', schema: 'next-tasks' },
    usage: { schema: 'llm-usage', description: 'optional: the calls made and their cost' },
  },
  preflight: (p, ctx) => checkBackends(ctx.root, [p.backend], ctx.env),
  async run(ctx) {
    const p = ctx.params;
    const criteria = readCriteriaParam(ctx.root, p.criteria);
    const excluded = new Set([p.criteria, ...p.history].map((f) => path.normalize(f)));
    const deliverablePaths = p.deliverable ?? ctx.inputs.filter((f) => !excluded.has(path.normalize(f)));
    const files = readDeliverable(ctx.root, deliverablePaths, { maxFileBytes: p.max_file_bytes, maxTotalBytes: p.max_total_bytes });
    const history = p.history.map((h, i) => ({
      round: roundOf(h) ?? i + 1,
      text: readFileSync(resolveInside(ctx.root, h, 'history path'), 'utf8'),
    }));
    const task = p.task ?? (p.task_file ? readFileSync(resolveInside(ctx.root, p.task_file, 'task_file'), 'utf8') : undefined);
    const prompt = evalPrompt({ task, criteria, deliverable: renderDeliverable(files), round: p.round, history });
    const usage = new UsageRecorder();
    const client = llmClientFor(ctx, p, usage);
    const judge = { backend: p.backend, model: client.backend(p.backend).model };
    const judged = await judgeEvaluation(
      client,
      p.backend,
      prompt,
      criteria.map((c) => c.id),
      judge,
      p.round,
      ctx.signal,
    );
    const out = guarded(ctx.root, judged.files, judge, p.round);
    writeJson(outputPath(ctx, 'verdict'), out.verdict);
    writeText(outputPath(ctx, 'critique'), out.packet);
    writeJson(outputPath(ctx, 'next_tasks'), out.nextTasks);
    writeUsageIfDeclared(ctx, usage);
    const degraded = out.verdict.status === 'degraded' ? out.verdict.degraded_reason : judged.degradedReason;
    if (degraded) ctx.report({ kind: 'warning', message: `${p.backend}: evaluation degraded: ${degraded}` });
    const scores = Object.entries(out.verdict.scores)
      .map(([id, s]) => `${id}=${s}`)
      .join(' ');
    return {
      summary: `${p.backend}: ${out.verdict.status === 'degraded' ? 'degraded' : out.verdict.verdict} ${scores}`.trim(),
      ...(degraded ? { warnings: [`degraded: ${degraded}`] } : {}),
    };
  },
});
