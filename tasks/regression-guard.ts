import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { checkBackends } from '../src/workflows/backends/preflight.ts';
import { sha256 } from '../src/workflows/backends/cache-key.ts';
import { readCriteriaParam } from '../src/workflows/refine/criteria-input.ts';
import { readDeliverable, renderDeliverable, type DeliverableFile } from '../src/workflows/refine/deliverable.ts';
import { askWithRepair } from '../src/workflows/refine/judge-call.ts';
import { regressionAnswerSchema } from '../src/workflows/refine/answer-schemas/call-schemas.ts';
import { regressionPrompt } from '../src/workflows/refine/prompts/regression-prompt.ts';
import { deriveResult, guardReader, type RegressionArtifact, type Side } from '../src/workflows/refine/regression.ts';
import { resolveInside } from '../src/workflows/refine/safe-path.ts';
import { seededRandom } from '../src/workflows/refine/seeded.ts';
import {
  llmClientFor,
  llmParamShape,
  outputPath,
  schemaProblems,
  writeJson,
  writeUsageIfDeclared,
} from '../src/workflows/refine/task-support.ts';
import { UsageRecorder } from '../src/workflows/refine/usage.ts';

const params = z.strictObject({
  backend: z.string().min(1),
  criteria: z.string().min(1),
  /** The previous version's files (answer kept for comparison); missing or empty skips the guard. */
  previous: z.array(z.string().min(1)).default([]),
  /** The candidate (new) version's files. */
  candidate: z.array(z.string().min(1)).min(1),
  task: z.string().min(1).optional(),
  seed: z.string().default('refinery'),
  max_file_bytes: z.int().min(1).default(100_000),
  max_total_bytes: z.int().min(1).default(400_000),
  ...llmParamShape,
});

function fingerprint(files: readonly DeliverableFile[]): string {
  return sha256(files.map((f) => `${f.path}\u0000${f.content ?? f.bytes}`).join('\u0001'));
}

/** Blind: only base names are shown, and which label the candidate gets is a seeded coin over both versions. */
function blindRender(files: readonly DeliverableFile[]): string {
  return renderDeliverable(files, (f) => path.posix.basename(f.path));
}

export default defineTask({
  name: 'regression-guard',
  description: 'Blind A/B comparison of the previous and the candidate version per criterion, with a derived pass | fail | mixed.',
  params,
  outputs: {
    regression: { default: 'refine/regression.json', schema: 'regression' },
    usage: { schema: 'llm-usage', description: 'optional: the calls made and their cost' },
  },
  preflight: (p, ctx) => checkBackends(ctx.root, [p.backend], ctx.env),
  async run(ctx) {
    const p = ctx.params;
    const file = outputPath(ctx, 'regression');
    const usage = new UsageRecorder();
    const present = p.previous.filter((f) => existsSync(resolveInside(ctx.root, f, 'previous path')));
    if (present.length === 0) {
      const skipped: RegressionArtifact = {
        schema_version: '1',
        status: 'skipped',
        result: 'pass',
        reason: 'no previous version to compare against (first iteration)',
      };
      writeJson(file, skipped);
      writeUsageIfDeclared(ctx, usage);
      return { summary: 'skipped: no previous version' };
    }
    const limits = { maxFileBytes: p.max_file_bytes, maxTotalBytes: p.max_total_bytes };
    const previous = readDeliverable(ctx.root, present, limits);
    const candidate = readDeliverable(ctx.root, p.candidate, limits);
    const candidateSide: Side = seededRandom(`${p.seed}|${fingerprint(previous)}|${fingerprint(candidate)}`)() < 0.5 ? 'A' : 'B';
    const [a, b] = candidateSide === 'A' ? [candidate, previous] : [previous, candidate];
    const criteria = readCriteriaParam(ctx.root, p.criteria);
    const ids = criteria.map((c) => c.id);
    const client = llmClientFor(ctx, p, usage);
    const judge = { backend: p.backend, model: client.backend(p.backend).model };
    const prompt = regressionPrompt({ task: p.task, criteria, answerA: blindRender(a), answerB: blindRender(b) });
    const result = await askWithRepair(
      client,
      p.backend,
      { tag: 'regression', prompt, jsonSchema: regressionAnswerSchema(ids), temperature: 0 },
      guardReader(ids),
      ctx.signal,
    );
    const artifact: RegressionArtifact = result.ok
      ? {
          schema_version: '1',
          status: 'ok',
          candidate: candidateSide,
          result: deriveResult(result.value.dimensions, candidateSide),
          judge,
          ...result.value,
        }
      : { schema_version: '1', status: 'degraded', result: null, reason: result.reason, judge };
    const problems = schemaProblems(ctx.root, 'regression', artifact);
    if (problems) throw new Error(`regression-guard produced an invalid artifact (${problems}); this is a bug`);
    writeJson(file, artifact);
    writeUsageIfDeclared(ctx, usage);
    if (artifact.status === 'degraded')
      ctx.report({ kind: 'warning', message: `${p.backend}: regression guard degraded: ${artifact.reason}` });
    return { summary: artifact.status === 'ok' ? `${artifact.result} (candidate was ${candidateSide})` : `degraded: ${artifact.reason}` };
  },
});
