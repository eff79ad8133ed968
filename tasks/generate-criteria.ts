import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { checkBackends } from '../src/workflows/backends/preflight.ts';
import { askWithRepair } from '../src/workflows/refine/judge-call.ts';
import { criteriaReader } from '../src/workflows/refine/criteria-parse.ts';
import { criteriaAnswerSchema } from '../src/workflows/refine/answer-schemas/call-schemas.ts';
import { DEFAULT_CRITERIA, type CriteriaDocument } from '../src/workflows/refine/criteria.ts';
import { readCriteriaParam } from '../src/workflows/refine/criteria-input.ts';
import { criteriaPrompt } from '../src/workflows/refine/prompts/criteria-prompt.ts';
import { resolveInside } from '../src/workflows/refine/safe-path.ts';
import {
  llmClientFor,
  llmParamShape,
  outputPath,
  schemaProblems,
  writeJson,
  writeUsageIfDeclared,
} from '../src/workflows/refine/task-support.ts';
import { SESSION_NAME } from '../src/workflows/refine/session-layout.ts';
import { UsageRecorder } from '../src/workflows/refine/usage.ts';

const params = z
  .strictObject({
    /** The task the deliverable answers (or task_file). */
    task: z.string().min(1).optional(),
    task_file: z.string().min(1).optional(),
    /** A user's criteria (bare array or {criteria:[...]}); when given, no model is called. */
    criteria_file: z.string().min(1).optional(),
    backend: z.string().min(1).optional(),
    /** Deliverable paths, listed (not included) so the criteria fit the artifact kind. */
    deliverable: z.array(z.string().min(1)).default([]),
    min: z.int().min(1).max(20).default(4),
    max: z.int().min(1).max(20).default(7),
    /** The refine session these criteria start (checked here, the first stage, so a bad name writes nothing). */
    session: SESSION_NAME.optional(),
    ...llmParamShape,
  })
  .refine((p) => p.min <= p.max, { message: 'min must not exceed max' })
  .refine((p) => p.criteria_file !== undefined || p.backend !== undefined, {
    message: "give 'criteria_file' (your own criteria) or 'backend' (a model to generate them)",
  })
  .refine((p) => p.criteria_file !== undefined || p.task !== undefined || p.task_file !== undefined, {
    message:
      "give 'task' (the task the deliverable answers, as text) or 'task_file' (a file holding it) so criteria can be generated; in the refine pipeline: --param query=TEXT or --param task_file=FILE",
  });

export default defineTask({
  name: 'generate-criteria',
  description: 'Writes 4-7 evaluation criteria in MassGen format (E1..EN, one primary), from a model or a user file.',
  params,
  outputs: {
    criteria: { default: 'refine/criteria.json', schema: 'eval-criteria', description: 'criteria.json' },
    usage: { schema: 'llm-usage', description: 'optional: the calls made and their cost' },
  },
  preflight: (p, ctx) => (p.criteria_file || !p.backend ? [] : checkBackends(ctx.root, [p.backend], ctx.env)),
  async run(ctx) {
    const p = ctx.params;
    const file = outputPath(ctx, 'criteria');
    const usage = new UsageRecorder();
    if (p.criteria_file) {
      const doc: CriteriaDocument = { schema_version: '1', source: 'user', criteria: readCriteriaParam(ctx.root, p.criteria_file) };
      writeJson(file, doc);
      writeUsageIfDeclared(ctx, usage);
      return { summary: `${doc.criteria.length} criteria from ${p.criteria_file}` };
    }
    const task = p.task ?? readFileSync(resolveInside(ctx.root, p.task_file as string, 'task_file'), 'utf8');
    const note = p.deliverable.length ? `The deliverable consists of: ${p.deliverable.join(', ')}` : undefined;
    const client = llmClientFor(ctx, p, usage);
    const bounds = { min: p.min, max: p.max };
    const result = await askWithRepair(
      client,
      p.backend as string,
      { tag: 'criteria', prompt: criteriaPrompt(task, bounds, note), jsonSchema: criteriaAnswerSchema(bounds), temperature: 0 },
      criteriaReader(bounds),
      ctx.signal,
    );
    let doc: CriteriaDocument;
    if (result.ok) {
      const { criteria, aspiration, notes } = result.value;
      doc = {
        schema_version: '1',
        source: 'model',
        criteria,
        ...(aspiration ? { aspiration } : {}),
        ...(notes.length ? { warnings: notes } : {}),
      };
    } else {
      const warning = `criteria generation failed (${result.reason}); using MassGen's four default criteria`;
      ctx.report({ kind: 'warning', message: warning });
      doc = { schema_version: '1', source: 'default', criteria: DEFAULT_CRITERIA.map((c) => ({ ...c })), warnings: [warning] };
    }
    const problems = schemaProblems(ctx.root, 'eval-criteria', doc);
    if (problems) throw new Error(`generate-criteria produced an invalid criteria document (${problems}); this is a bug`);
    writeJson(file, doc);
    writeUsageIfDeclared(ctx, usage);
    return { summary: `${doc.criteria.length} criteria (${doc.source})`, warnings: doc.warnings };
  },
});
