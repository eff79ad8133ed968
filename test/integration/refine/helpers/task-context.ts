// A hand-built task context, standing in for the engine: staging paths in a temp dir, schema
// validation of every staged output, then an atomic rename into place (what the engine will do).
import { createRunBudget } from '../../../../src/engine/executor/budget.ts';
import { mkdirSync, renameSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { boundShell } from '../../../../src/engine/shell/zx.ts';
import { SchemaRegistry } from '../../../../src/engine/artifacts/schema-registry.ts';
import type { TaskContext, TaskDefinition, TaskReport, TaskResult } from '../../../../src/task/define-task.ts';
import type { z } from 'zod';

export interface TaskRun {
  // biome-ignore lint/suspicious/noConfusingVoidType: what a task's run resolves to
  result: TaskResult | void;
  reports: TaskReport[];
  logs: string[];
  /** Output name -> final path (absolute), only for outputs that were written and valid. */
  placed: Record<string, string>;
  /** Output name -> validation problems, for staged outputs that failed their schema (left out of place). */
  rejected: Record<string, string>;
}

export interface RunOptions {
  root: string;
  /** Output name -> final path relative to root. */
  outputs: Record<string, string>;
  inputs?: string[];
  runId?: string;
  stage?: string;
  signal?: AbortSignal;
}

let counter = 0;
const registries = new Map<string, SchemaRegistry>();

function registryFor(root: string): SchemaRegistry {
  let registry = registries.get(root);
  if (!registry) {
    registry = new SchemaRegistry(root);
    registries.set(root, registry);
  }
  return registry;
}

export async function runTask<S extends z.ZodType>(task: TaskDefinition<S>, rawParams: unknown, options: RunOptions): Promise<TaskRun> {
  const runId = options.runId ?? `test-run-${process.pid}-${++counter}`;
  const stage = options.stage ?? `task:${task.name}`;
  // One staging dir per call: parallel stages of one run never share staging files.
  const staging = path.join(options.root, '.refinery', 'staging', runId, `${stage.replace(/[^\w.-]+/g, '_')}-${++counter}`);
  mkdirSync(staging, { recursive: true });
  const outputs = Object.fromEntries(Object.keys(options.outputs).map((name) => [name, path.join(staging, `${name}.out`)]));
  const reports: TaskReport[] = [];
  const logs: string[] = [];
  const signal = options.signal ?? new AbortController().signal;
  const ctx: TaskContext<z.output<S>> = {
    budget: createRunBudget(undefined),
    params: task.params.parse(rawParams),
    root: options.root,
    stage,
    runId,
    inputs: [...(options.inputs ?? [])].sort(),
    env: {},
    outputs,
    outputTargets: options.outputs,
    $: boundShell({ cwd: options.root, signal }).$,
    signal,
    cacheDir: (name) => {
      const dir = path.join(options.root, '.refinery', 'cache', name);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    log: (message) => logs.push(message),
    progress: () => undefined,
    report: (entry) => reports.push(entry),
  };
  const result = await task.run(ctx);
  const registry = registryFor(options.root);
  const placed: Record<string, string> = {};
  const rejected: Record<string, string> = {};
  for (const [name, target] of Object.entries(options.outputs)) {
    const staged = outputs[name] as string;
    if (!existsSync(staged)) continue;
    const schema = task.outputs?.[name]?.schema;
    if (schema) {
      const check = registry.validate(schema, JSON.parse(readFileSync(staged, 'utf8')));
      if (!check.ok) {
        rejected[name] = check.issues.map((i) => `${i.pointer} ${i.message}`).join('; ');
        continue;
      }
    }
    const final = path.join(options.root, target);
    mkdirSync(path.dirname(final), { recursive: true });
    renameSync(staged, final);
    placed[name] = final;
  }
  return { result, reports, logs, placed, rejected };
}

export function readJson<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
