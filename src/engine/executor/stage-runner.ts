import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import type { ArtifactIssue, StageEndEvent, StageOutcomeCode } from '../types/events.ts';
import type { EventBus } from '../events/bus.ts';
import type { SchemaRegistry } from '../artifacts/schema-registry.ts';
import { checkStagedOutputs, discardStaged, publishOutputs, rejectOutputs, type StagedOutput } from '../artifacts/commit.ts';
import { describeWriteProblem, isFsError, writeProblem } from '../state/write-problem.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { FingerprintParts, StageRecord, StageState } from '../state/stage-state.ts';
import type { RunBudget, TaskContext, TaskResult } from '../../task/define-task.ts';
import { ExprEvalError, type Scope } from '../expr/evaluate.ts';
import { renderCommand, renderEnv, renderWith } from './render.ts';
import { loadTask } from './task-loader.ts';
import { taskErrorSite } from './task-error-site.ts';
import { runCommand } from '../shell/command.ts';
import { boundShell, type BoundShell } from '../shell/zx.ts';
import type { RunnerPool } from '../shell/runner-pool.ts';
import type { Observations } from '../state/observations.ts';
import { fileKey } from '../paths/file-key.ts';
import { outputFolderProblem } from '../paths/inside-project.ts';
import { hashReads } from './task-reads.ts';
import { recordPublished } from './published-outputs.ts';
import { stagingPaths } from './staging.ts';

export interface StageRunContext {
  root: string;
  runId: string;
  bus: EventBus;
  /** The stage's own signal, aborted with the run's (and nothing else hangs on the run's). */
  signal: AbortSignal;
  hashes: FileHashes;
  state: StageState;
  schemas: SchemaRegistry;
  taskFile(name: string): string | undefined;
  budget: RunBudget;
  /** Told the new stat of every output this stage publishes. */
  observations?: Observations;
  /** Long-lived runners that start `run:` commands; absent where each is spawned directly (a run of one command, no python here). */
  runners?: RunnerPool;
  /** Makes the expression scope, given the output paths the stage should see. */
  scope(outputs: Record<string, string>): Scope;
  /**
   * The environment the run's commands start from: the process's, read once per run (reading
   * `process.env` whole goes through Node for each variable, ~40 µs a command).
   */
  environment: Readonly<NodeJS.ProcessEnv>;
  /** Variables this stage's processes get on top of `environment` (StageContextOptions.stageEnv). */
  stageEnv: Readonly<Record<string, string>>;
  /** Whether a stage that fails stops the run (no `-k`). */
  failureStopsRun: boolean;
}

export interface StageOutcome {
  status: 'succeeded' | 'failed' | 'aborted';
  code: StageOutcomeCode;
  attempts: number;
  reason?: string;
  summary?: string;
  issues?: ArtifactIssue[];
  rejectedDir?: string;
  /** When its command started, where that was later than the stage got its slot (it waited in a runner). */
  startedAt?: number;
  /** It never started: dropped while it waited in a runner, once the run stopped after a failure. */
  notStarted?: boolean;
}

function timeoutSignal(parent: AbortSignal, ms: number | undefined): { signal: AbortSignal; timedOut: () => boolean; clear: () => void } {
  if (ms === undefined) return { signal: parent, timedOut: () => false, clear: () => {} };
  const controller = new AbortController();
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    controller.abort(new Error('timeout'));
  }, ms);
  const onParent = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => fired,
    clear: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

function _dirMtime(abs: string): number | null {
  try {
    return statSync(abs, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}

type AttemptResult =
  | { ok: true; summary?: string; reads?: readonly string[] }
  | { ok: false; code: StageOutcomeCode; reason: string; notStarted?: boolean };

async function runCommandStage(
  inst: StageInstance,
  ctx: StageRunContext,
  staged: StagedOutput[],
  signal: AbortSignal,
  onStart: () => void,
  lastAttempt: boolean,
): Promise<AttemptResult> {
  const scope = ctx.scope(Object.fromEntries(staged.map((o) => [o.name, o.staging])));
  const { pieces, values } = renderCommand(inst, scope);
  const spec = {
    cwd: ctx.root,
    env: { ...ctx.environment, ...ctx.stageEnv, ...renderEnv(inst, scope), REFINERY_STAGE: inst.id, REFINERY_RUN_ID: ctx.runId },
    pieces,
    values,
    signal,
    onLine: (stream: 'stdout' | 'stderr', message: string) => ctx.bus.emit({ type: 'stage-log', stage: inst.id, stream, message }),
  };
  // Told to the pool so that the stages waiting in runners are dropped the moment this command
  // fails, before its jobserver token can start one of them.
  const stopsRunIfFailed = lastAttempt && ctx.failureStopsRun;
  const outcome = ctx.runners ? await ctx.runners.run({ ...spec, onStart, stopsRunIfFailed }) : (onStart(), await runCommand(spec));
  if (outcome.exitCode === 0 && !outcome.aborted) return { ok: true };
  if (outcome.notStarted) return { ok: false, code: 'stopped-after-failure', reason: 'not started', notStarted: true };
  const how = outcome.exitCode !== null ? `exit code ${outcome.exitCode}` : `signal ${outcome.signal}`;
  return {
    ok: false,
    code: 'command-failed',
    reason: `command failed with ${how}${outcome.tail ? `: ${outcome.tail.split('\n').slice(-3).join(' | ')}` : ''}`,
  };
}

async function runTaskStage(
  inst: StageInstance,
  ctx: StageRunContext,
  staged: StagedOutput[],
  signal: AbortSignal,
  inputs: readonly string[],
): Promise<AttemptResult> {
  if (inst.spec.kind !== 'task') throw new Error(`internal: ${inst.id} is not a task stage`);
  const file = ctx.taskFile(inst.spec.task);
  if (!file) return { ok: false, code: 'unknown-task', reason: `task '${inst.spec.task}' not found` };
  let task: Awaited<ReturnType<typeof loadTask>>;
  try {
    task = await loadTask(file, ctx.runId);
  } catch (error) {
    return {
      ok: false,
      code: 'task-load-failed',
      reason: `cannot load task '${inst.spec.task}' from ${file}: ${(error as Error).message.split('\n')[0]}`,
    };
  }
  const targets = Object.fromEntries(staged.map((o) => [o.name, o.target.path]));
  const raw = renderWith(inst.spec.with, ctx.scope(targets));
  const parsed = task.params.safeParse(raw);
  if (!parsed.success) {
    // A problem of the params as a whole (an unknown key, a rule across keys) has no path to name.
    const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
    return { ok: false, code: 'invalid-params', reason: `invalid params for task '${task.name}': ${problems}` };
  }
  let shell: BoundShell | undefined;
  const taskCtx: TaskContext<unknown> = {
    params: parsed.data,
    root: ctx.root,
    stage: inst.id,
    runId: ctx.runId,
    inputs,
    outputs: Object.fromEntries(staged.map((o) => [o.name, o.staging])),
    outputTargets: targets,
    env: ctx.stageEnv,
    // zx's $ is made on first use: most tasks never call it.
    get $() {
      shell ??= boundShell({
        cwd: ctx.root,
        signal,
        ...(Object.keys(ctx.stageEnv).length > 0 ? { env: { ...process.env, ...ctx.stageEnv } } : {}),
        onLine: (stream, message) => ctx.bus.emit({ type: 'stage-log', stage: inst.id, stream, message }),
      });
      return shell.$;
    },
    signal,
    cacheDir: (name) => {
      const dir = path.join(ctx.root, '.refinery', 'cache', fileKey(name));
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    log: (message) => ctx.bus.emit({ type: 'stage-log', stage: inst.id, stream: 'log', message }),
    progress: (fraction, message) =>
      ctx.bus.emit({
        type: 'stage-progress',
        stage: inst.id,
        fraction: Math.min(1, Math.max(0, fraction)),
        ...(message ? { message } : {}),
      }),
    budget: ctx.budget,
    report: (report) => {
      if (report.kind === 'llm-call') ctx.budget.charge(report.costUsd);
      ctx.bus.emit({ type: 'stage-report', stage: inst.id, report });
    },
  };
  try {
    const result = (await untilAborted(task.run(taskCtx), signal)) as TaskResult | undefined;
    for (const w of result?.warnings ?? []) ctx.bus.emit({ type: 'stage-report', stage: inst.id, report: { kind: 'warning', message: w } });
    const reads = result?.reads;
    if (reads !== undefined && !(Array.isArray(reads) && reads.every((r) => typeof r === 'string' && r !== '')))
      return { ok: false, code: 'task-threw', reason: `task '${task.name}' returned reads that are not a list of paths` };
    return { ok: true, ...(result?.summary ? { summary: result.summary } : {}), ...(reads ? { reads } : {}) };
  } catch (error) {
    // A command the task ran through ctx.$ failed: said as the command's failure.
    const command = shell?.describeFailure(error);
    if (command) return { ok: false, code: 'command-failed', reason: command };
    const site = taskErrorSite(error, file, ctx.root);
    const message = (error as Error | null)?.message ?? String(error);
    return { ok: false, code: 'task-threw', reason: `task '${task.name}' threw: ${message}${site ? ` (at ${site})` : ''}` };
  }
}

/**
 * The task's promise, or a rejection as soon as the stage is aborted (Ctrl-C, its timeout): a
 * task that does not watch `ctx.signal` must not hold the run up. What it still does in the
 * background writes only to staging files, which are discarded.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function misplacedOutput(root: string, inst: StageInstance): { code: StageOutcomeCode; reason: string } | undefined {
  for (const [name, o] of Object.entries(inst.outputs)) {
    const problem = outputFolderProblem(root, o.path);
    if (problem)
      return {
        code: problem.outside ? 'output-outside-project' : 'output-path-blocked',
        reason: `output '${name}' (${o.path}) ${problem.message}`,
      };
  }
  return undefined;
}

/** A stage whose outputs were not published: the staged files go aside with the errors beside them. */
function rejected(
  inst: StageInstance,
  ctx: StageRunContext,
  staged: readonly StagedOutput[],
  issues: ArtifactIssue[],
  attempts: number,
  code: 'invalid-artifact' | 'publish-failed',
): StageOutcome {
  ctx.hashes.invalidateAll();
  const rejectedDir = rejectOutputs(staged, path.join(ctx.root, '.refinery', 'rejected', ctx.runId, fileKey(inst.id)), issues);
  const first = issues[0] as ArtifactIssue;
  return {
    status: 'failed',
    code,
    attempts,
    reason: `output '${first.output}' (${first.path}) ${first.pointer ? `at ${first.pointer} ` : ''}${first.message}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`,
    issues,
    rejectedDir: path.relative(ctx.root, rejectedDir),
  };
}

export interface RunStageInput {
  inst: StageInstance;
  fingerprint: string;
  parts: FingerprintParts;
  inputs: readonly string[];
  reason: string;
}

/** Runs one stage: staging paths, retries, validation, atomic publish, fingerprint last. */
export async function runStage(input: RunStageInput, ctx: StageRunContext): Promise<StageOutcome> {
  const commandStart: { at?: number } = {};
  const outcome = await runStageAttempts(input, ctx, commandStart);
  return commandStart.at === undefined ? outcome : { ...outcome, startedAt: commandStart.at };
}

async function runStageAttempts(input: RunStageInput, ctx: StageRunContext, commandStart: { at?: number }): Promise<StageOutcome> {
  const { inst } = input;
  let started = Date.now();
  // A command that may wait in a runner for a jobserver token is announced when it starts.
  const waits = inst.spec.kind === 'run' && ctx.runners?.holdsWaitingJobs === true;
  // Checked before the stage runs (and again when publishing): no work for an output that cannot land.
  const misplaced = misplacedOutput(ctx.root, inst);
  if (misplaced) return { status: 'failed', attempts: 0, ...misplaced };
  const staged = stagingPaths(ctx.root, ctx.runId, inst);
  const attempts = 1 + inst.spec.retry.attempts;
  let last: AttemptResult = { ok: false, code: 'internal-error', reason: 'not run' };
  let attempt = 0;
  for (attempt = 1; attempt <= attempts; attempt += 1) {
    if (ctx.signal.aborted) return { status: 'aborted', code: 'interrupted', attempts: attempt - 1, reason: 'run interrupted' };
    if (attempt > 1) discardStaged(staged);
    if (attempt === 1) {
      // From here the old outputs may be replaced: the stage is stale until it succeeds. A
      // stage whose old record cannot be dropped (a full disk) must not run at all.
      const problem = journalProblem(ctx, () => ctx.state.drop(inst.id));
      if (problem) return { status: 'failed', code: 'state-write-failed', attempts: 0, reason: `${problem}; the stage did not run` };
    }
    const attemptNumber = attempt;
    const work = async (): Promise<AttemptResult> => {
      let announced = false;
      const announce = (): void => {
        if (announced) return;
        announced = true;
        if (waits && attemptNumber === 1) started = commandStart.at = Date.now();
        ctx.bus.emit({ type: 'stage-start', stage: inst.id, attempt: attemptNumber, reason: input.reason });
      };
      if (!waits) announce();
      const limit = timeoutSignal(ctx.signal, inst.spec.timeoutMs);
      try {
        const result =
          inst.spec.kind === 'run'
            ? await runCommandStage(inst, ctx, staged, limit.signal, announce, attemptNumber === attempts)
            : await runTaskStage(inst, ctx, staged, limit.signal, input.inputs);
        // Every attempt but one dropped unstarted (the run stopped) has begun, however it ended:
        // announced here where nothing announced it yet.
        if (!ctx.signal.aborted && (result.ok || !result.notStarted)) announce();
        return !result.ok && limit.timedOut()
          ? { ok: false, code: 'timed-out', reason: `timed out after ${inst.spec.timeoutMs} ms` }
          : result;
      } catch (error) {
        // The command or params are rendered again here with the staging paths; a failing expression fails the stage.
        if (error instanceof ExprEvalError) {
          announce();
          return { ok: false, code: 'expression-failed', reason: error.message };
        }
        throw error;
      } finally {
        limit.clear();
      }
    };
    last = await work();
    // Dropped while it waited for a jobserver token: the run stopped after another stage failed.
    if (!last.ok && last.notStarted) return { status: 'failed', code: last.code, attempts: 0, reason: last.reason, notStarted: true };
    if (ctx.signal.aborted) {
      discardStaged(staged);
      return { status: 'aborted', code: 'interrupted', attempts: attempt, reason: 'run interrupted' };
    }
    if (last.ok) break;
    if (attempt < attempts) await sleep(Math.min(30_000, inst.spec.retry.backoffMs * 2 ** (attempt - 1)), ctx.signal);
  }
  attempt = Math.min(attempt, attempts);
  if (!last.ok) {
    ctx.hashes.invalidateAll();
    discardStaged(staged);
    return { status: 'failed', code: last.code, attempts: attempt, reason: last.reason };
  }
  const { issues, files } = checkStagedOutputs(staged, ctx.schemas);
  if (issues.length > 0) return rejected(inst, ctx, staged, issues, attempt, 'invalid-artifact');
  // All or none: every output is valid before any is renamed, and a failed rename undoes the others.
  const unpublished = publishOutputs(ctx.root, staged);
  if (unpublished.length > 0) return rejected(inst, ctx, staged, unpublished, attempt, 'publish-failed');
  const outputs = recordPublished(ctx, staged, files);
  const { reads: _previous, ...parts } = input.parts;
  const record: StageRecord = {
    stage: inst.id,
    fingerprint: input.fingerprint,
    parts: last.reads ? { ...parts, reads: hashReads(ctx.root, last.reads, ctx.hashes, ctx.observations) } : parts,
    outputs,
    runId: ctx.runId,
    finishedAt: new Date().toISOString(),
    durationMs: Date.now() - started,
  };
  const problem = journalProblem(ctx, () => ctx.state.commit(record));
  if (problem)
    return {
      status: 'failed',
      code: 'state-write-failed',
      attempts: attempt,
      reason: `${problem}; its outputs are in place, but without their record the stage runs again next time`,
    };
  return { status: 'succeeded', code: 'ran', attempts: attempt, ...(last.summary ? { summary: last.summary } : {}) };
}

/** A journal write that failed on the file system (a full disk), as one line; other errors are bugs and propagate. */
function journalProblem(ctx: StageRunContext, write: () => void): string | undefined {
  try {
    write();
    return undefined;
  } catch (error) {
    if (!isFsError(error)) throw error;
    return describeWriteProblem(writeProblem(ctx.state.file, error), ctx.root);
  }
}

export type { StageEndEvent };
