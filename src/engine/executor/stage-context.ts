import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Plan, StageInstance } from '../types/plan.ts';
import { runsInProcess } from '../pipeline/in-process.ts';
import type { EventBus } from '../events/bus.ts';
import type { SchemaRegistry } from '../artifacts/schema-registry.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import type { Observations } from '../state/observations.ts';
import type { RunBudget } from '../../task/define-task.ts';
import { RunnerPool, runnerPoolSupported } from '../shell/runner-pool.ts';
import { ArtifactReader } from './artifact-reader.ts';
import { stageCodeHash, type AssessContext } from './assess.ts';
import { createRunBudget } from './budget.ts';
import { scopeFor } from './render.ts';
import type { StageRunContext } from './stage-runner.ts';
import { stagingDir } from './staging.ts';

/** What of a run's options its stages see. */
export interface StageContextOptions {
  root: string;
  runId: string;
  bus: EventBus;
  signal: AbortSignal;
  force: boolean;
  /** `-k`: a failed stage does not stop the run. */
  keepGoing?: boolean;
  forceReason?: string;
  hashes: FileHashes;
  state: StageState;
  schemas: SchemaRegistry;
  taskFile(name: string): string | undefined;
  schemaFile(name: string): string | undefined;
  observations?: Observations;
  budgetUsd?: number;
  /** Runners that outlive the run (the watch's), warm already: every command goes through them. */
  runners?: RunnerPool;
  /** Runners this run started ahead of its first command (startRunnersAhead): used like those it starts itself, and stopped at its end. */
  runnersAhead?: RunnerPool;
  /** commandLookahead's answer for the run: the runners it starts share a jobserver of this many tokens. */
  commandLookahead?: number;
  /**
   * Variables for every process a stage starts, besides the run's environment, asked once as the
   * stage gets its slot (a trace exporter gives the stage span's TRACEPARENT).
   */
  stageEnv?: (inst: StageInstance) => Readonly<Record<string, string>>;
}

const NO_VARIABLES: Readonly<Record<string, string>> = Object.freeze({});

function countRunStages(plan: Plan): number {
  return plan.instances.reduce((n, i) => (i.spec.kind === 'run' ? n + 1 : n), 0);
}

function newRunPool(root: string, runId: string, commandsAtOnce: number | undefined): RunnerPool {
  const scratch = stagingDir(root, runId);
  mkdirSync(scratch, { recursive: true });
  return new RunnerPool(root, scratch, undefined, commandsAtOnce);
}

/**
 * How many stages beyond `-j` hold a slot, waiting in runners, under a jobserver: one per slot,
 * at most 4 (each is a runner process, and with many slots a command ends often enough that
 * a few waiting cover the round trip).
 */
export function waitingJobs(concurrency: number): number {
  return Math.min(concurrency, 4);
}

/**
 * The `-j` a run's commands keep through a jobserver, with a few more jobs waiting in the
 * runners (runner-pool.ts, waitingJobs); undefined for a run whose stages hold their slots as
 * they always did. A command then starts the moment another ends, not after refinery has read
 * that it ended, published its outputs and sent the next: at 10,000 stages on two cores, the
 * cores sat idle ~20 % of a full build waiting for that round trip. Only where nothing but
 * commands holds the slots: no task stage or loop (they run in this process, limited by the
 * slots alone), no named pool, no stage timeout (a job that waits for a token would spend its
 * time), more than one command (a single one is spawned directly). The caller leaves it off
 * with a remote cache and with a watch's runners (lent warm, one per slot).
 */
export function commandLookahead(plan: Plan, concurrency: number): number | undefined {
  if (runsInProcess(plan) || Object.keys(plan.pipeline.pools).length > 0 || !runnerPoolSupported()) return undefined;
  if (plan.instances.some((i) => i.spec.timeoutMs !== undefined)) return undefined;
  return countRunStages(plan) > 1 ? concurrency : undefined;
}

/**
 * The run's runners, started before it reads its state, when its commands would go through
 * runners anyway (more than one `run:` stage): a runner is ready ~10 ms after its spawn, time
 * the run would otherwise wait for at its first command. The run's state folders must exist.
 */
export function startRunnersAhead(plan: Plan, root: string, runId: string, commandsAtOnce?: number): RunnerPool | undefined {
  const runStages = countRunStages(plan);
  if (runStages <= 1 || !runnerPoolSupported()) return undefined;
  const pool = newRunPool(root, runId, commandsAtOnce);
  pool.warm(1);
  return pool;
}

/**
 * What assessing and running a stage needs from its run, made once per run: the artifact
 * reader, the task-code hashes, the budget, and the command runners (started on first use).
 */
export class StageContexts {
  readonly artifacts: ArtifactReader;
  readonly assess: AssessContext;
  private readonly codeHashes = new Map<string, string>();
  private readonly budget: RunBudget;
  private runnerPool: RunnerPool | undefined;
  /**
   * `run:` commands started so far. In a run that has one `run:` stage, it is spawned directly:
   * starting a runner costs more than that one spawn. Otherwise the runners start with the
   * first command (each spawn from this large process costs about what starting a runner does).
   */
  private commands = 0;
  /** The plan's `run:` stages: as many commands at most. */
  private readonly runStages: number;
  /** The process's environment as the run started: what its commands start from. */
  private readonly environment: Readonly<NodeJS.ProcessEnv> = { ...process.env };

  constructor(
    private readonly plan: Plan,
    private readonly options: StageContextOptions,
  ) {
    this.runStages = countRunStages(plan);
    this.runnerPool = options.runnersAhead;
    this.artifacts = new ArtifactReader(options.root);
    this.budget = createRunBudget(options.budgetUsd);
    this.assess = {
      root: options.root,
      params: plan.params,
      vars: plan.vars,
      pipeline: plan.pipeline.name,
      hashes: options.hashes,
      force: options.force,
      ...(options.forceReason ? { forceReason: options.forceReason } : {}),
      codeHash: (inst) => this.codeHash(inst),
      taskFile: options.taskFile,
      schemaFile: options.schemaFile,
      selfArtifacts: (inst) => this.artifacts.own(inst),
      ...(options.observations ? { observations: options.observations } : {}),
    };
  }

  /** The runners this run started (not those lent to it), for the run's end. */
  get runners(): RunnerPool | undefined {
    return this.runnerPool;
  }

  /**
   * Everything `runStage` needs for one stage; `deps` are the instances its expressions may read,
   * `signal` the stage's own (aborted with the run's).
   */
  forRun(
    inst: StageInstance,
    deps: () => StageInstance[],
    inputs: readonly string[],
    signal: AbortSignal,
    elsewhere = false,
  ): StageRunContext {
    const { options } = this;
    // A stage a worker runs starts no command here: it needs no runner.
    if (inst.spec.kind === 'run' && !elsewhere) this.commands += 1;
    const lent = inst.spec.kind === 'run' && !elsewhere ? options.runners : undefined;
    const pooled = !lent && !elsewhere && inst.spec.kind === 'run' && (this.commands > 1 || this.runStages > 1) && runnerPoolSupported();
    return {
      root: options.root,
      runId: options.runId,
      bus: options.bus,
      signal,
      hashes: options.hashes,
      state: options.state,
      schemas: options.schemas,
      taskFile: options.taskFile,
      budget: this.budget,
      environment: this.environment,
      failureStopsRun: options.keepGoing !== true,
      stageEnv: options.stageEnv?.(inst) ?? NO_VARIABLES,
      ...(options.observations ? { observations: options.observations } : {}),
      scope: (outputs) =>
        scopeFor(inst, {
          params: this.plan.params,
          vars: this.plan.vars,
          pipeline: this.plan.pipeline.name,
          artifacts: this.artifacts.view(deps()),
          outputs,
          inputs,
          exists: (p) => existsSync(path.join(options.root, p)),
        }),
      ...(lent ? { runners: lent } : pooled ? { runners: (this.runnerPool ??= this.startRunners()) } : {}),
    };
  }

  private startRunners(): RunnerPool {
    return newRunPool(this.options.root, this.options.runId, this.options.commandLookahead);
  }

  /** Hash of what a stage runs; a task's file is hashed once per run. */
  private codeHash(inst: StageInstance): string {
    const key = inst.spec.kind === 'task' ? inst.spec.task : undefined;
    const known = key === undefined ? undefined : this.codeHashes.get(key);
    if (known !== undefined) return known;
    const h = stageCodeHash(inst, this.options.root, this.options.hashes, this.options.taskFile, this.options.observations);
    if (key !== undefined) this.codeHashes.set(key, h);
    return h;
  }
}
