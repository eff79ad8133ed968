import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { budgetForRun, type Budget } from '../backends/budget.ts';
import { loadBackendsConfig } from '../backends/config-file.ts';
import { LlmClient } from '../backends/llm-client.ts';
import { SchemaRegistry } from '../artifacts/schema-registry.ts';
import type { TaskContext } from '../task/define-task.ts';

/** Params every model-calling task shares. */
export const llmParamShape = {
  /** The backends file, relative to the project root. */
  config: z.string().min(1).default('refinery.config.yaml'),
  /** Spending cap for the whole run (shared by its stages in this process); no new calls once spent. */
  budget_usd: z.number().min(0).optional(),
};

/**
 * A client for one task run: responses cached under `.refinery/cache/llm`, each call reported as an
 * `llm-call` event, the run's budget (or the one the engine passes) enforced.
 */
export function llmClientFor(ctx: TaskContext<unknown>, params: { config: string; budget_usd?: number }, budget?: Budget): LlmClient {
  const config = loadBackendsConfig(ctx.root, params.config);
  return new LlmClient({
    config,
    root: ctx.root,
    cacheDir: ctx.cacheDir('llm'),
    budget: budget ?? budgetForRun(ctx.runId, params.budget_usd),
    log: (message) => ctx.log(message),
    onCall: (call) =>
      ctx.report({
        kind: 'llm-call',
        backend: call.backend,
        model: call.model,
        inputTokens: call.inputTokens,
        outputTokens: call.outputTokens,
        costUsd: call.costUsd,
        latencyMs: call.latencyMs,
        cached: call.cached,
      }),
  });
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
