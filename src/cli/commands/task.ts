import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import type { Plan, StageInstance } from '../../engine/types/plan.ts';
import type { TaskStageSpec } from '../../engine/types/pipeline.ts';
import { projectResolver } from '../../engine/pipeline/resolve-names.ts';
import { normalizeRelative } from '../../engine/pipeline/expand.ts';
import { loadTask } from '../../engine/executor/task-loader.ts';
import { execute } from '../../engine/executor/executor.ts';
import { EventBus, newRunId } from '../../engine/events/bus.ts';
import { consoleSink } from '../../engine/events/console-sink.ts';
import { jsonlSink } from '../../engine/events/jsonl-sink.ts';
import { FileHashes } from '../../engine/state/file-hashes.ts';
import { StageState } from '../../engine/state/stage-state.ts';
import { acquireProjectLock } from '../../engine/state/project-lock.ts';
import { reportLockRefusal, reportWriteProblems, stateWarn } from '../state-report.ts';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';

const USAGE = `Usage: refinery task NAME [--param KEY=VALUE]... [--output NAME=PATH]... [--json]

Runs one task on its own, outside any pipeline. Params are parsed as JSON when they can be
(numbers, true/false, lists), else taken as text. Outputs default to the paths the task declares;
they are validated and renamed into place exactly as in a pipeline run.`;

function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function pairs(list: readonly string[], flag: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq <= 0) return `${flag} ${item}: expected NAME=VALUE`;
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        param: { type: 'string', short: 'p', multiple: true, default: [] },
        output: { type: 'string', short: 'o', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    io.stderr.write(`refinery task: ${(error as Error).message}\n`);
    return 2;
  }
  const name = parsed.positionals[0];
  const resolver = projectResolver(io.cwd);
  if (!name) {
    io.stderr.write(`refinery task: name the task to run\n${USAGE}\n\nTasks: ${resolver.taskNames().join(', ')}\n`);
    return 2;
  }
  const file = resolver.taskFile(name);
  if (!file) {
    io.stderr.write(`refinery task: unknown task '${name}'. Tasks: ${resolver.taskNames().join(', ')}\n`);
    return 2;
  }
  const params = pairs(parsed.values.param, '--param');
  const outputsFlag = pairs(parsed.values.output, '--output');
  if (typeof params === 'string' || typeof outputsFlag === 'string') {
    io.stderr.write(`refinery task: ${typeof params === 'string' ? params : outputsFlag}\n`);
    return 2;
  }
  let task: Awaited<ReturnType<typeof loadTask>>;
  try {
    task = await loadTask(file);
  } catch (error) {
    io.stderr.write(`refinery task: cannot load task '${name}' from ${file}: ${(error as Error).message.split('\n')[0]}\n`);
    return 1;
  }
  const outputs: StageInstance['outputs'] = {};
  for (const [out, decl] of Object.entries(task.outputs ?? {})) {
    const p = outputsFlag[out] ?? decl.default;
    if (p) outputs[out] = { path: normalizeRelative(p), ...(decl.schema ? { schema: decl.schema } : {}) };
  }
  for (const [out, p] of Object.entries(outputsFlag)) if (!outputs[out]) outputs[out] = { path: normalizeRelative(p) };
  const spec: TaskStageSpec = {
    kind: 'task',
    id: `task:${name}`,
    task: name,
    with: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, parseValue(v)])),
    inputs: [],
    outputs: {},
    needs: [],
    as: 'item',
    retry: { attempts: 0, backoffMs: 0 },
    env: {},
  };
  const inst: StageInstance = { id: `task:${name}`, stageId: name, spec, vars: {}, inputs: [], outputs, needs: [] };
  const warn = stateWarn(io);
  // Like a run, it writes outputs, the hash cache and a journal: one refinery at a time.
  const lock = acquireProjectLock(io.cwd, warn);
  if (!lock.ok) {
    reportLockRefusal(io, lock);
    return 1;
  }
  try {
    const runId = newRunId();
    const pipeline = `task-${name}`;
    const bus = new EventBus(runId, pipeline);
    const jsonl = jsonlSink(io.cwd, runId, warn);
    bus.subscribe(jsonl.sink);
    if (parsed.values.json) bus.subscribe((e) => io.stdout.write(`${JSON.stringify(e)}\n`));
    else bus.subscribe(consoleSink({ out: io.stdout, live: false, color: false, verbose: true }));
    // A plan of one stage, run as any pipeline's: always, however recent its last result.
    const plan: Plan = {
      pipeline: { name: pipeline, file, hash: '', params: {}, vars: {}, pools: {}, stages: [spec] },
      root: io.cwd,
      params: spec.with,
      vars: {},
      instances: [inst],
      loops: [],
    };
    const result = await execute(plan, {
      root: io.cwd,
      runId,
      bus,
      signal: io.signal,
      concurrency: 1,
      force: true,
      forceReason: 'run by hand',
      keepGoing: false,
      only: [],
      hashes: new FileHashes(io.cwd, warn),
      state: new StageState(io.cwd, pipeline, warn),
      schemas: new SchemaRegistry(io.cwd),
      taskFile: (n) => resolver.taskFile(n),
      schemaFile: (n) => resolver.schemaFile(n),
      expandIteration: () => ({ instances: [], diagnostics: [] }),
    });
    const unwritten = reportWriteProblems(io, [...result.writeProblems, jsonl.close()], result.status === 'failed');
    return result.status === 'succeeded' && !unwritten ? 0 : result.status === 'aborted' ? 130 : 1;
  } finally {
    lock.release();
  }
}

export const taskCommand: Command = { name: 'task', summary: 'Run one task on its own', usage: USAGE, run };
