import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { budgetForRun, type Budget } from '../backends/budget.ts';
import { loadBackendsConfig } from '../backends/config-file.ts';
import { LlmClient } from '../backends/llm-client.ts';
import { remoteResponsesForRun } from '../backends/remote-responses.ts';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
import type { TaskContext } from '../../task/define-task.ts';
import { callNote, type UsageRecorder } from './usage.ts';

/** Params every model-calling task shares. */
export const llmParamShape = {
  /** The backends file, relative to the project root. */
  config: z.string().min(1).default('refinery.config.yaml'),
  /**
   * Spending cap shared by the stages of one run that run in this process (the first stage fixes it);
   * the engine's run budget (`refinery run --budget-usd N`, `ctx.budget`) is enforced as well.
   */
  budget_usd: z.number().min(0).optional(),
};

/**
 * A client for one task run: responses cached under `.refinery/cache/llm`, each call reported as an
 * `llm-call` event (the engine charges it to the run's budget) and handed to `usage`; no new call
 * starts once the budget_usd cap or the run's budget is spent.
 */
export function llmClientFor(
  ctx: TaskContext<unknown>,
  params: { config: string; budget_usd?: number },
  usage?: UsageRecorder,
  budget?: Budget,
): LlmClient {
  const config = loadBackendsConfig(ctx.root, params.config);
  return new LlmClient({
    config,
    root: ctx.root,
    cacheDir: ctx.cacheDir('llm'),
    ...withRemote(ctx.runId),
    budget: budget ?? budgetForRun(ctx.runId, params.budget_usd),
    gate: ctx.budget,
    log: (message) => ctx.log(message),
    warn: (message) => ctx.report({ kind: 'warning', message }),
    onCall: (call) => {
      usage?.add(call);
      ctx.log(callNote(call));
      ctx.report({
        kind: 'llm-call',
        backend: call.backend,
        model: call.model,
        inputTokens: call.inputTokens,
        outputTokens: call.outputTokens,
        costUsd: call.costUsd,
        latencyMs: call.latencyMs,
        cached: call.cached,
        ...(call.cacheSource ? { cache: call.cacheSource } : {}),
        ...(call.system ? { system: call.system } : {}),
        tag: call.tag,
        attempts: call.attempts,
        ...(call.schema ? { schemaVia: call.schema } : {}),
      });
    },
  });
}

/** The run's remote cache for model answers, when `refinery run` has one. */
function withRemote(runId: string): { remote?: NonNullable<ReturnType<typeof remoteResponsesForRun>> } {
  const remote = remoteResponsesForRun(runId);
  return remote ? { remote } : {};
}

/** Writes usage.json when the stage declares a `usage` output (the refine pipeline does; a lone task need not). */
export function writeUsageIfDeclared(ctx: TaskContext<unknown>, usage: UsageRecorder): void {
  const file = ctx.outputs.usage;
  if (!file) return;
  const artifact = usage.artifact(ctx.stage, ctx.runId);
  const problems = schemaProblems(ctx.root, 'llm-usage', artifact);
  if (problems) throw new Error(`stage ${ctx.stage}: usage.json is invalid (${problems}); this is a bug`);
  writeJson(file, artifact);
}

const registries = new Map<string, SchemaRegistry>();

export function schemaRegistry(root: string): SchemaRegistry {
  let registry = registries.get(root);
  if (!registry) {
    registry = new SchemaRegistry(root);
    registries.set(root, registry);
  }
  return registry;
}

/** The problems of `data` against schema `name`, or undefined when valid. */
export function schemaProblems(root: string, name: string, data: unknown): string | undefined {
  const result = schemaRegistry(root).validate(name, data);
  if (result.ok) return undefined;
  return result.issues
    .slice(0, 5)
    .map((i) => `${i.pointer || '/'} ${i.message}`)
    .join('; ');
}

/** The staging path of a declared output; a clear error when the stage did not declare it. */
export function outputPath(ctx: TaskContext<unknown>, name: string): string {
  const file = ctx.outputs[name];
  if (!file) throw new Error(`stage ${ctx.stage}: output '${name}' is not declared; declare it under outputs: in the pipeline`);
  return file;
}

export function writeText(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`);
}

export function writeJson(file: string, data: unknown): void {
  writeText(file, JSON.stringify(data, null, 2));
}
