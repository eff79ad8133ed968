import { statSync } from 'node:fs';
import path from 'node:path';
import type { Graph } from '../graph/graph.ts';
import type { EventBus } from '../events/bus.ts';
import type { StageInstance } from '../types/plan.ts';
import { newRunId } from '../events/bus.ts';
import type { SchemaRegistry } from '../artifacts/schema-registry.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import { StageState } from '../state/stage-state.ts';
import type { StateWarn } from '../state/set-aside.ts';
import { execute, type ExecuteResult } from '../executor/executor.ts';
import { stagesAskingToBeRedone } from '../executor/stale-check.ts';
import { loadPipeline, overridesFor, reexpand, type LoadedPipeline } from '../session/open-pipeline.ts';
import { recordRun } from '../session/record-run.ts';
import { Observations } from '../state/observations.ts';
import { manifestFile, manifestKey, type RecordUpdate } from '../state/run-manifest.ts';
import type { NoopRecord } from '../state/noop-record.ts';
import { canSkipByStat, carryAll, lastRecord, refineryVersion, skippedStages } from '../state/noop-recording.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { RunnerPool } from '../shell/runner-pool.ts';
import { ChangeIndex, type Classification, type OwnWrite } from './change-index.ts';
import { planFor, selectionFor } from './selection.ts';
import { planGraph } from '../graph/plan-graph.ts';
import type { BusyPolicy, FileChange, WatchNotice } from './types.ts';

/** What every pipeline of one daemon shares. */
export interface WatchShared {
  root: string;
  hashes: FileHashes;
  /** The current schema validators (replaced when a project schema file changes). */
  schemas(): SchemaRegistry;
  resetSchemas(): void;
  concurrency: number;
  keepGoing: boolean;
  onBusy: BusyPolicy;
  overrides: Readonly<Record<string, string>>;
  /** A bus for one run, with the caller's sinks on it; close() once the run ended. */
  openRun(
    runId: string,
    pipeline: string,
  ): { bus: EventBus; close(): void; stageEnv?: (inst: StageInstance) => Readonly<Record<string, string>> };
  notify(notice: WatchNotice): void;
  /** The set of paths to watch changed (reload or new foreach items). */
  retarget(): void;
  /** Told when a run ends, for the daemon's bookkeeping (tests, benchmarks). */
  runEnded(pipeline: string, result: ExecuteResult): void;
  /** How long after a run to run again the stages whose `stale_if` holds; 0: never. */
  recheckMs: number;
  /** Told of damaged state files set aside. */
  warn?: StateWarn;
  /** The watcher's sequence now: what a record written after this run started is known to hold from. */
  epoch(): number;
  /** Command runners that outlive each run. */
  runners?: RunnerPool;
  /** A no-op record was written by a run that started at `epoch`. */
  recordHolds(recordFile: string, epoch: number, update: RecordUpdate): void;
}

interface Running {
  controller: AbortController;
  /** undefined: every stage. */
  selection: Set<string> | undefined;
  restart: boolean;
}

function fileStamp(file: string): number[] | undefined {
  try {
    const st = statSync(file);
    return [st.size, st.mtimeMs, st.ino];
  } catch {
    return undefined;
  }
}

interface Recording {
  key: string;
  epoch: number;
  /** The last record, carried over for what a run of a few stages does not look at. */
  previous: NoopRecord | undefined;
  /** What the pipeline's loading saw, then what this run sees. */
  observations: Observations;
  skipped: Map<string, string>;
}

interface Cycle {
  selection: Set<string> | undefined;
}

/**
 * One watched pipeline: its expansion, the index from paths to stages, and a loop that turns
 * batches of changes into runs, one at a time. Changes that come during a run are kept and
 * make exactly one follow-up run (or, with `--on-busy restart`, abort the run when they touch
 * one of its stages).
 */
export class PipelineWatch {
  private index: ChangeIndex;
  private graph: Graph;
  private instanceIds: Set<string>;
  private state: StageState;
  private pending = new Map<string, FileChange>();
  private fullPending = false;
  private carry: Set<string> | 'all' | undefined;
  private running: Running | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** Held by WatchDaemon.exclusive: changes are kept, no run starts. */
  private paused = false;
  private idleWaiters: Array<() => void> = [];
  private recheckTimer: NodeJS.Timeout | undefined;
  /** The no-op record this watch wrote last, with its file's stat then. */
  private lastRecord: { record: NoopRecord; stamp: number[] } | undefined;
  /** The plan record on disk may not be this expansion's (it was reloaded or expanded again). */
  private planRecorded = false;

  constructor(
    private readonly shared: WatchShared,
    private pipeline: LoadedPipeline,
  ) {
    this.index = new ChangeIndex(shared.root, pipeline);
    this.graph = planGraph(pipeline.expansion.plan);
    this.instanceIds = new Set(pipeline.expansion.plan.instances.map((i) => i.id));
    this.state = new StageState(shared.root, pipeline.spec.name, shared.warn);
  }

  get name(): string {
    return this.pipeline.spec.name;
  }

  get file(): string {
    return this.pipeline.file;
  }

  get targets(): ReadonlySet<string> {
    return this.index.targets;
  }

  get outside(): readonly string[] {
    return this.index.outside;
  }

  /** The journal of this pipeline's stages as this watch keeps it. */
  get stageState(): StageState {
    return this.state;
  }

  /** True while a run is going. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Brings every stage up to date, as `refinery run` would. */
  start(): void {
    this.fullPending = true;
    this.wake();
  }

  offer(changes: readonly FileChange[]): void {
    if (this.stopped) return;
    for (const c of changes) this.pending.set(`${c.kind}\0${c.path}`, c);
    if (this.running) this.maybeRestart(changes, this.running);
    else this.wake();
  }

  /** Stops taking changes; resolves when the current run (if any) ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.recheckTimer);
    await this.loop;
  }

  /** Holds runs back; resolves once the current one (if any) ended. */
  async pause(): Promise<void> {
    this.paused = true;
    await this.loop;
  }

  /** Lets the kept changes run. */
  resume(): void {
    this.paused = false;
    if (this.hasWork()) this.wake();
  }

  /** Aborts the current run through its signal (second Ctrl-C). */
  abort(): void {
    this.running?.controller.abort(new Error('interrupted'));
  }

  /** Resolves once no run is going and no change waits. */
  whenIdle(): Promise<void> {
    if (!this.loop && (this.stopped || !this.hasWork())) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private hasWork(): boolean {
    return this.pending.size > 0 || this.fullPending || this.carry !== undefined;
  }

  private wake(): void {
    if (this.loop || this.stopped || this.paused) return;
    this.loop = this.drain().finally(() => {
      this.loop = undefined;
      if (!this.stopped && !this.paused && this.hasWork()) this.wake();
      else for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  /**
   * Stages whose last result asks to be redone (`stale_if`) run again after `recheckMs`, with
   * no file changing: a MassGen turn that went silent turns from in progress to incomplete.
   */
  private scheduleRecheck(): void {
    clearTimeout(this.recheckTimer);
    this.recheckTimer = undefined;
    if (this.shared.recheckMs <= 0 || this.stopped) return;
    const { plan } = this.pipeline.expansion;
    const ids = stagesAskingToBeRedone({
      root: this.shared.root,
      pipeline: this.name,
      params: plan.params,
      vars: plan.vars,
      instances: plan.instances.filter((i) => this.state.get(i.id)),
    });
    if (ids.length === 0) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      if (this.stopped) return;
      const carried = this.carry === 'all' ? 'all' : new Set([...(this.carry ?? []), ...ids]);
      this.carry = carried;
      this.shared.notify({ kind: 'recheck', pipeline: this.name, stages: ids });
      this.wake();
    }, this.shared.recheckMs);
    this.recheckTimer.unref();
  }

  private async drain(): Promise<void> {
    while (!this.stopped && !this.paused && this.hasWork()) {
      try {
        const cycle = await this.prepare();
        if (cycle) await this.run(cycle);
      } catch (error) {
        this.shared.notify({ kind: 'watch-error', message: `${this.name}: ${(error as Error).stack ?? String(error)}` });
      }
    }
  }

  private ownWrite = (p: { node: string; record: string; output: string; path: string }): OwnWrite => {
    const running = this.running;
    if (running && (running.selection === undefined || running.selection.has(p.node))) return 'defer';
    const recorded = this.state.get(p.record)?.outputs[p.output];
    let st;
    try {
      st = statSync(path.join(this.shared.root, p.path));
    } catch {
      return recorded ? 'foreign' : 'own';
    }
    if (recorded && recorded[0] === st.size && recorded[1] === st.mtimeMs && recorded[2] === st.ino) return 'own';
    return 'foreign';
  };

  private classify(changes: readonly FileChange[]): Classification {
    return this.index.classify(changes, this.ownWrite);
  }

  /** Turns the waiting changes into the selection of the next run, reloading or expanding first when they ask for it. */
  private async prepare(): Promise<Cycle | undefined> {
    const changes = [...this.pending.values()];
    this.pending.clear();
    let full = this.fullPending || this.carry === 'all';
    const carried = this.carry instanceof Set ? this.carry : new Set<string>();
    this.fullPending = false;
    this.carry = undefined;
    let found = this.classify(changes);
    if (found.reload) {
      if (await this.reload()) {
        full = true;
        found = this.classify(changes);
      }
    } else if (found.reexpand) {
      const added = this.expandAgain();
      if (added && added.length > 0) {
        const again = this.classify(changes);
        found = { ...again, affected: new Set([...again.affected, ...added]) };
      }
    }
    if (found.schemas) this.shared.resetSchemas();
    for (const file of found.tasks) this.shared.notify({ kind: 'task-changed', pipeline: this.name, file });
    if (full) return { selection: undefined };
    const affected = new Set([...found.affected, ...carried].filter((id) => this.graph.deps.has(id)));
    if (affected.size === 0) return undefined;
    return { selection: selectionFor(affected, this.graph, (id) => this.instanceIds.has(id) && this.state.get(id) !== undefined) };
  }

  private adopt(pipeline: LoadedPipeline): void {
    const renamed = pipeline.spec.name !== this.pipeline.spec.name;
    this.pipeline = pipeline;
    this.index = new ChangeIndex(this.shared.root, pipeline);
    this.graph = planGraph(pipeline.expansion.plan);
    this.instanceIds = new Set(pipeline.expansion.plan.instances.map((i) => i.id));
    this.planRecorded = false;
    if (renamed) this.state = new StageState(this.shared.root, pipeline.spec.name, this.shared.warn);
    this.shared.retarget();
  }

  private async reload(): Promise<boolean> {
    const outcome = await loadPipeline(this.shared.root, this.pipeline.file, this.shared.overrides, {
      ...(this.shared.warn ? { warn: this.shared.warn } : {}),
    });
    if (!outcome.ok) {
      this.shared.notify({
        kind: 'reload-failed',
        pipeline: this.name,
        file: outcome.file,
        diagnostics: outcome.diagnostics,
        source: outcome.source,
      });
      return false;
    }
    this.adopt(outcome.pipeline);
    this.shared.notify({ kind: 'reloaded', pipeline: this.name, file: this.pipeline.file });
    return true;
  }

  /** Expands the foreach globs again; returns the ids of new stages (undefined when it failed). */
  private expandAgain(): string[] | undefined {
    const before = this.instanceIds;
    const outcome = reexpand(this.shared.root, this.pipeline);
    if (!outcome.ok) {
      this.shared.notify({
        kind: 'reload-failed',
        pipeline: this.name,
        file: this.pipeline.file,
        diagnostics: outcome.diagnostics,
        source: '',
      });
      return undefined;
    }
    const after = new Set(outcome.pipeline.expansion.plan.instances.map((i) => i.id));
    const added = [...after].filter((id) => !before.has(id)).sort();
    const retired = [...before].filter((id) => !after.has(id)).sort();
    if (added.length === 0 && retired.length === 0) return [];
    this.adopt(outcome.pipeline);
    if (added.length > 0) this.shared.notify({ kind: 'stages-added', pipeline: this.name, stages: added });
    if (retired.length > 0) this.shared.notify({ kind: 'stages-retired', pipeline: this.name, stages: retired });
    return added;
  }

  private maybeRestart(changes: readonly FileChange[], running: Running): void {
    if (this.shared.onBusy !== 'restart' || running.restart || running.controller.signal.aborted) return;
    const found = this.classify(changes);
    const hits =
      found.reload || found.reexpand
        ? [...(running.selection ?? this.instanceIds)]
        : [...found.affected].filter((id) => running.selection === undefined || running.selection.has(id));
    if (hits.length === 0) return;
    running.restart = true;
    this.shared.notify({ kind: 'restarting', pipeline: this.name, stages: hits.sort() });
    running.controller.abort(new Error('restart: its inputs changed'));
  }

  /**
   * What this run needs to keep the no-op record as `refinery run` does, so a `refinery run`
   * after it (asking this daemon, or after the watch stopped) finds everything up to date from
   * stats: the run's observations, on top of the last record's for a run of a few stages.
   * Undefined when the record cannot be kept (loops, stale_if, a run of a few stages with no
   * record to build on).
   */
  private startRecording(pipeline: LoadedPipeline, cycle: Cycle, bus: EventBus): Recording | undefined {
    const { plan } = pipeline.expansion;
    if (plan.loops.length > 0 || !canSkipByStat(pipeline.spec)) return undefined;
    const key = manifestKey({
      version: refineryVersion(),
      pipelineFile: pipeline.file,
      params: overridesFor(pipeline.spec, this.shared.overrides),
    });
    const epoch = this.shared.epoch();
    let previous: NoopRecord | undefined;
    if (cycle.selection !== undefined) {
      previous = this.lastRecordFor(pipeline.file, key) ?? lastRecord(this.shared.root, pipeline.file, key);
      if (!previous) return undefined;
    }
    // Its stats were taken since the pipeline was loaded: that time bounds them from below
    // (settled-stat.ts). What loading looked at is recorded first, and stands.
    const observations = new Observations(pipeline.observed.startedAt);
    for (const [rel, stat] of pipeline.observed.files) observations.files.set(rel, stat);
    for (const [rel, mtime] of pipeline.observed.dirs) observations.dirs.set(rel, mtime);
    for (const [rel, answer] of pipeline.observed.probes) observations.probes.set(rel, answer);
    const skipped = skippedStages(bus, previous ? new Map(Object.entries(previous.skipped)) : undefined);
    return { key, epoch, previous, observations, skipped };
  }

  /** The record this watch wrote last, while it is still the one on disk (nothing to read back). */
  private lastRecordFor(file: string, key: string): NoopRecord | undefined {
    const last = this.lastRecord;
    if (!last || last.record.key !== key) return undefined;
    const now = fileStamp(manifestFile(this.shared.root, file));
    if (!now || now.some((v, i) => v !== last.stamp[i])) return undefined;
    return last.record;
  }

  private record(pipeline: LoadedPipeline, recording: Recording): WriteProblem[] {
    const { root } = this.shared;
    const { plan } = pipeline.expansion;
    const writePlan = !this.planRecorded;
    const { problems, record } = recordRun(root, {
      pipelineFile: pipeline.file,
      key: recording.key,
      plan,
      stages: plan.instances.map((i) => i.id),
      observations: recording.observations,
      skipped: recording.skipped,
      ...(recording.previous ? { previous: carryAll(recording.previous) } : {}),
      writePlan,
      ...(this.shared.warn ? { warn: this.shared.warn } : {}),
    });
    if (!record) return problems;
    this.planRecorded = true;
    const stamp = fileStamp(manifestFile(root, pipeline.file));
    this.lastRecord = stamp ? { record, stamp } : undefined;
    this.shared.recordHolds(manifestFile(root, pipeline.file), recording.epoch, {
      kind: 'written',
      record,
      observed: recording.observations.files.keys(),
    });
    return problems;
  }

  private async run(cycle: Cycle): Promise<void> {
    const { plan } = this.pipeline.expansion;
    const runId = newRunId();
    const { bus, close, stageEnv } = this.shared.openRun(runId, this.name);
    const running: Running = { controller: new AbortController(), selection: cycle.selection, restart: false };
    this.running = running;
    let result: ExecuteResult;
    const pipeline = this.pipeline;
    const recording = this.startRecording(pipeline, cycle, bus);
    try {
      result = await execute(cycle.selection ? planFor(plan, cycle.selection, this.graph) : plan, {
        root: this.shared.root,
        runId,
        bus,
        signal: running.controller.signal,
        concurrency: this.shared.concurrency,
        force: false,
        keepGoing: this.shared.keepGoing,
        only: [],
        ...(cycle.selection ? { select: cycle.selection } : {}),
        hashes: this.shared.hashes,
        state: this.state,
        schemas: this.shared.schemas(),
        taskFile: (n) => pipeline.resolver.taskFile(n),
        schemaFile: (n) => pipeline.resolver.schemaFile(n),
        expandIteration: (loop, i) => pipeline.expansion.expandIteration(loop, i),
        ...(recording ? { observations: recording.observations } : {}),
        ...(this.shared.runners ? { runners: this.shared.runners } : {}),
        ...(stageEnv ? { stageEnv } : {}),
      });
      if (recording && result.status === 'succeeded') result.writeProblems.push(...this.record(pipeline, recording));
    } finally {
      close();
      this.running = undefined;
    }
    if (running.restart) this.carry = cycle.selection ?? 'all';
    this.scheduleRecheck();
    this.shared.runEnded(this.name, result);
  }
}
