import type { LoopInstance, Plan, StageInstance } from '../types/plan.ts';
import type { Diagnostic } from '../types/source.ts';
import type { ArtifactIssue, RemoteHit, RunStatus, StageOutcomeCode, StageStatus } from '../types/events.ts';
import type { EventBus } from '../events/bus.ts';
import type { SchemaRegistry } from '../artifacts/schema-registry.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { StageRecord, StageState } from '../state/stage-state.ts';
import { isFsError } from '../state/write-problem.ts';
import type { Observations } from '../state/observations.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { RunnerPool } from '../shell/runner-pool.ts';
import { dropManifest, UNCHANGED_BY_STAT } from '../state/run-manifest.ts';
import { findCycle } from '../graph/graph.ts';
import { instanceNode, planGraph } from '../graph/plan-graph.ts';
import { assessStage } from './assess.ts';
import { runStage, type RunStageInput, type StageOutcome } from './stage-runner.ts';
import type { StageCache } from '../remote-cache/stage-cache.ts';
import type { RemoteSlots } from './remote-slots.ts';
import { StageContexts, waitingJobs } from './stage-context.ts';
import { AbortFanOut } from './abort-fan-out.ts';
import { onlySelection } from './selection.ts';
import { Dispatcher, dispatchFailure } from './dispatch.ts';
import { tearDown } from './teardown.ts';
import { beginIteration, iterationDeps, iterationOutcome, loopDecision, loopOutputs, memberSettled, untilHolds } from './loop-gate.ts';
import {
  blockingDependency,
  createSchedule,
  halt,
  idleState,
  readyNodes,
  settle,
  settleOutside,
  skippedDependencies,
  unsettledNodes,
  type LoopGate,
  type NodeEntry,
  type Schedule,
  type ScheduleNode,
  type StageNode,
} from './scheduler.ts';

export interface ExecuteOptions {
  root: string;
  runId: string;
  bus: EventBus;
  signal: AbortSignal;
  concurrency: number;
  force: boolean;
  /** Why a forced stage runs, as its stage-start says (default `--force`). */
  forceReason?: string;
  keepGoing: boolean;
  /** Command runners that outlive this run (the watch's): used from the first command, not stopped at the run's end. */
  runners?: RunnerPool;
  /** Runners this run started before it read its state (startRunnersAhead): stopped at the run's end. */
  runnersAhead?: RunnerPool;
  /**
   * commandLookahead's answer: the run's commands keep `concurrency` through a jobserver, and
   * waitingJobs more stages hold slots (they wait in a runner for a command to end).
   * The runners the run starts, and those started ahead, must be made with it.
   */
  commandLookahead?: number;
  /** Stage or instance ids to run, with what they need; all when empty. */
  only: readonly string[];
  /**
   * Instance and loop ids to assess (and run when stale); every other instance counts as
   * up to date with what it wrote by its record in `state`, without an event and without being
   * counted. All when absent. The watch daemon passes the stages a change affects, what is
   * downstream of them, and the upstream ones that have no record (or are loops).
   */
  select?: ReadonlySet<string>;
  /** Emit an up-to-date stage-end for every stage outside `select` (refinery run does; watch does not). */
  reportUnselected?: boolean;
  /**
   * With `reportUnselected`: false counts those stages in the run's totals without an event each
   * (when nobody reads the run stage by stage, 10,000 events cost more than the check itself).
   */
  eventPerUnselected?: boolean;
  /**
   * Stages of the pipeline left out of `plan` (a run that read back only the part of the last
   * run's plan that changed files reach): up to date, reported like the unselected ones.
   */
  unlisted?: readonly string[];
  /** Stages outside `select` that the last run skipped, with the reason: reported skipped again. */
  previouslySkipped?: ReadonlyMap<string, string>;
  hashes: FileHashes;
  state: StageState;
  schemas: SchemaRegistry;
  taskFile(name: string): string | undefined;
  schemaFile(name: string): string | undefined;
  expandIteration(loop: LoopInstance, iteration: number): { instances: StageInstance[]; diagnostics: Diagnostic[] };
  /** Collects what the run looked at on disk (for the next run's no-op check). */
  observations?: Observations;
  /** USD limit for paid model calls in this run (`--budget-usd`). */
  budgetUsd?: number;
  /** A remote cache: stale stages are looked up there before they run, and their results stored. */
  stageCache?: StageCache;
  /** Variables for every process a stage starts, besides the run's environment (StageContextOptions.stageEnv). */
  stageEnv?: (inst: StageInstance) => Readonly<Record<string, string>>;
  /** Workers on other machines (`--workers`): stages they may run go to them rather than to a local slot. */
  remoteSlots?: RemoteSlots;
}

export interface ExecuteResult {
  status: RunStatus;
  counts: Record<StageStatus, number>;
  diagnostics: Diagnostic[];
  /** State files the run could not write at its end (a full disk): the run counts as failed. */
  writeProblems: WriteProblem[];
}

type Node = ScheduleNode<StageInstance, LoopInstance>;
type Stage = StageNode<StageInstance>;
type Gate = LoopGate<StageInstance, LoopInstance>;

/** What a stage-end carries besides its status. */
interface StageEnd {
  code: StageOutcomeCode;
  reason?: string | undefined;
  durationMs?: number;
  attempts?: number;
  summary?: string;
  outputs?: Record<string, string>;
  issues?: ArtifactIssue[];
  rejectedDir?: string;
  worker?: string;
}

const ZERO_COUNTS = (): Record<StageStatus, number> => ({ succeeded: 0, failed: 0, fresh: 0, skipped: 0, blocked: 0, aborted: 0 });

const NOT_STARTED_AFTER_FAILURE = 'not started: an earlier stage failed (use --keep-going to continue past failures)';

/**
 * Runs a plan: a node goes to the scheduler's ready list when its dependencies have settled;
 * a stage is assessed, settles at once when up to date, or is dispatched to a slot; a loop
 * gate expands its iterations. Events report each stage's end; the counts are theirs.
 */
export class Executor {
  private schedule: Schedule<StageInstance, LoopInstance>;
  private readonly counts = ZERO_COUNTS();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly dispatcher: Dispatcher;
  private readonly stages: StageContexts;
  private readonly stageSignals: AbortFanOut;
  private finish: () => void = () => {};
  private stageOf: Map<string, string> | undefined;
  /** Stages given a local slot and not finished (with remote slots: whether a local one is free). */
  private readonly local = new Set<string>();

  constructor(
    private readonly plan: Plan,
    private readonly options: ExecuteOptions,
  ) {
    const slots = options.commandLookahead ? options.concurrency + waitingJobs(options.concurrency) : options.concurrency;
    // With workers and no local slots asked for, one runs the stages that must stay here.
    this.dispatcher = new Dispatcher(slots, plan.pipeline.pools);
    this.stages = new StageContexts(plan, options);
    this.stageSignals = new AbortFanOut(options.signal);
    this.schedule = createSchedule([], { keepGoing: options.keepGoing });
  }

  private get bus(): EventBus {
    return this.options.bus;
  }

  private get nodes(): Map<string, Node> {
    return this.schedule.nodes;
  }

  /** Builds the schedule; a cycle or an `--only` that matches nothing is a diagnostic instead. */
  private build(): Schedule<StageInstance, LoopInstance> | undefined {
    const graph = planGraph(this.plan);
    const cycle = findCycle(graph.deps);
    if (cycle) {
      this.diagnostics.push({ severity: 'error', code: 'dependency-cycle', message: `dependency cycle: ${cycle.join(' -> ')}` });
      return undefined;
    }
    let selected: Set<string> | undefined;
    if (this.options.only.length > 0) {
      selected = onlySelection(graph.deps, this.options.only, (id) => this.nodeStage(id));
      if (!selected) {
        this.diagnostics.push({
          severity: 'error',
          code: 'no-such-stage',
          message: `--only ${this.options.only.join(',')}: no such stage in pipeline '${this.plan.pipeline.name}'`,
        });
        return undefined;
      }
    }
    const entries: Array<NodeEntry<StageInstance, LoopInstance>> = [];
    for (const inst of this.plan.instances)
      if (!selected || selected.has(inst.id))
        entries.push({ kind: 'stage', id: inst.id, deps: graph.deps.get(inst.id) ?? [], stage: inst });
    for (const loop of this.plan.loops)
      if (!selected || selected.has(loop.id)) entries.push({ kind: 'loop', id: loop.id, deps: graph.deps.get(loop.id) ?? [], loop });
    return createSchedule(entries, { keepGoing: this.options.keepGoing });
  }

  private nodeStage(id: string): string | undefined {
    this.stageOf ??= new Map(this.plan.instances.map((i) => [i.id, i.stageId]));
    return this.stageOf.get(id);
  }

  async execute(): Promise<ExecuteResult> {
    const started = Date.now();
    const schedule = this.build();
    if (!schedule) return { status: 'failed', counts: this.counts, diagnostics: this.diagnostics, writeProblems: [] };
    this.schedule = schedule;
    // Nodes outside `select` are done already: their records stand in for a run.
    const unselected = this.options.select ? settleOutside(schedule, this.options.select) : [];
    // Whatever this run changes, the last run's no-op record no longer holds.
    dropManifest(this.options.root, this.plan.pipeline.file);
    const unlisted = this.options.unlisted ?? [];
    const stages =
      this.options.select && !this.options.reportUnselected
        ? this.plan.instances.filter((i) => this.nodes.get(i.id)?.status === undefined).length
        : this.plan.instances.length + unlisted.length;
    this.bus.emit({ type: 'run-start', stages, params: this.plan.params, concurrency: this.options.concurrency });
    if (this.options.reportUnselected) {
      for (const id of [...unselected, ...unlisted]) {
        const skip = this.options.previouslySkipped?.get(id);
        if (this.options.eventPerUnselected === false) {
          this.counts[skip === undefined ? 'fresh' : 'skipped'] += 1;
          continue;
        }
        // A stage is skipped only when its `when` is false.
        this.reportEnd(id, skip === undefined ? 'fresh' : 'skipped', {
          code: skip === undefined ? 'up-to-date' : 'when-false',
          reason: skip ?? UNCHANGED_BY_STAT,
        });
      }
    }
    const done = new Promise<void>((resolve) => {
      this.finish = resolve;
    });
    const onAbort = (): void => {
      schedule.interrupted = true;
    };
    this.options.signal.addEventListener('abort', onAbort, { once: true });
    this.release(readyNodes(schedule));
    this.checkFinished();
    await done;
    this.options.signal.removeEventListener('abort', onAbort);
    this.stageSignals.close();
    // Uploads still under way finish before the run ends (bounded by the cache's timeouts); an
    // interrupted run does not wait for them.
    if (!this.options.signal.aborted) await this.options.stageCache?.flush();
    const writeProblems = tearDown({
      root: this.options.root,
      runId: this.options.runId,
      hashes: this.options.hashes,
      state: this.options.state,
      runners: this.stages.runners,
    });
    const status: RunStatus = this.options.signal.aborted
      ? 'aborted'
      : schedule.failed || writeProblems.length > 0
        ? 'failed'
        : 'succeeded';
    const remote = this.options.stageCache ? { remote: this.options.stageCache.summary() } : {};
    this.bus.emit({ type: 'run-end', status, durationMs: Date.now() - started, counts: this.counts, ...remote });
    return { status, counts: this.counts, diagnostics: this.diagnostics, writeProblems };
  }

  /** With no stage running: the run is over, or it stopped and what is left ends blocked or aborted. */
  private checkFinished(): void {
    const schedule = this.schedule;
    const state = idleState(schedule);
    if (state === 'done') this.finish();
    else if (state === 'sweep') {
      const aborted = this.options.signal.aborted;
      const reason = halt(schedule) === 'aborted' ? 'run interrupted' : NOT_STARTED_AFTER_FAILURE;
      for (const node of unsettledNodes(schedule)) {
        if (node.status === undefined)
          this.settleNode(node, aborted ? 'aborted' : 'blocked', { code: aborted ? 'interrupted' : 'stopped-after-failure', reason });
      }
      this.finish();
    }
  }

  /** Handles every node whose dependencies have settled; up-to-date stages settle without a slot. */
  private release(ids: string[]): void {
    const work = [...ids];
    while (work.length > 0) {
      const node = this.nodes.get(work.shift() ?? '');
      if (!node || node.status !== undefined) continue;
      work.push(...this.consider(node));
    }
  }

  /** Decides what to do with a ready node; returns ids that became ready as a result. */
  private consider(node: Node): string[] {
    const schedule = this.schedule;
    if (halt(schedule)) return [];
    const blocker = blockingDependency(schedule, node);
    if (blocker) {
      const failed = blocker.status === 'failed';
      return this.settleNode(node, 'blocked', {
        code: failed ? 'upstream-failed' : 'upstream-not-run',
        reason: `needs '${blocker.id}', which ${failed ? 'failed' : 'did not run'}`,
      });
    }
    return node.kind === 'loop' ? this.startIteration(node, 1) : this.considerStage(node);
  }

  /** The stage instances a node's dependencies stand for: a loop's stands for its iterations' stages. */
  private depInstances(node: Node): StageInstance[] {
    const out: StageInstance[] = [];
    for (const d of node.deps) {
      const dep = this.nodes.get(d);
      if (dep?.kind === 'stage') out.push(dep.stage);
      else if (dep) for (const member of dep.members) out.push(member.stage);
    }
    return out;
  }

  /**
   * What a settled node wrote, for the stages that `needs:` it (read from its record when first
   * asked for): a stage that ran again and wrote the same bytes does not make them run.
   */
  private wrote(node: Node): string {
    node.wrote ??=
      node.status === 'skipped'
        ? 'skipped'
        : node.kind === 'loop'
          ? loopOutputs(node.members.map((m) => this.wrote(m)))
          : this.options.state.wrote(node.id);
    return node.wrote;
  }

  /**
   * The stages it `needs:` with what they wrote; not those it only reads files of (their files
   * are its inputs), nor those a loop's stages wait for only for order (`ordered`).
   */
  private needed(node: Stage): Record<string, string> {
    const out: Record<string, string> = {};
    const ordered = node.stage.ordered;
    for (const d of node.stage.needs) {
      if (ordered?.includes(d)) continue;
      const dep = node.deps.includes(d) ? this.nodes.get(d) : undefined;
      if (dep) out[d] = this.wrote(dep);
    }
    return out;
  }

  private considerStage(node: Stage): string[] {
    const schedule = this.schedule;
    const inst = node.stage;
    const record = this.options.state.get(inst.id);
    const verdict = assessStage(
      inst,
      { needed: this.needed(node), skipped: skippedDependencies(schedule, node) },
      this.stages.artifacts.view(this.depInstances(node)),
      record,
      this.stages.assess,
    );
    switch (verdict.kind) {
      case 'skip':
        return this.settleNode(node, 'skipped', verdict);
      case 'fail':
        return this.settleNode(node, 'failed', verdict);
      case 'fresh':
        if (verdict.restamp && record) this.restamp({ ...record, fingerprint: verdict.fingerprint, parts: verdict.parts });
        return this.settleNode(node, 'fresh', { code: 'up-to-date', reason: 'up to date' });
      case 'run':
        this.dispatch(node, {
          fingerprint: verdict.fingerprint,
          parts: verdict.parts,
          inputs: verdict.inputs,
          reason: verdict.reasons.join('; '),
        });
        return [];
    }
  }

  /**
   * A record made of the same reads under another fingerprint (a \`needs:\` dropped, or written by
   * an earlier refinery) takes the new one, so the next run matches it at once. A failed write (a
   * full disk) only leaves that check to be made again.
   */
  private restamp(record: StageRecord): void {
    try {
      this.options.state.commit(record);
    } catch (error) {
      if (!isFsError(error)) throw error;
    }
  }

  /** Whether a stage goes to a worker: it may, and no local slot asked for (`-j`) is free. */
  private toWorker(input: RunStageInput): boolean {
    const remote = this.options.remoteSlots;
    if (!remote || remote.keepsLocal(input) !== undefined) return false;
    return this.local.size >= remote.localSlots;
  }

  private dispatch(node: Stage, input: Omit<RunStageInput, 'inst'>): void {
    const schedule = this.schedule;
    const inst = node.stage;
    schedule.running += 1;
    const remote = this.toWorker({ inst, ...input }) ? this.options.remoteSlots : undefined;
    if (!remote) this.local.add(node.id);
    const job = async (): Promise<void> => {
      const started = Date.now();
      // The run may have stopped while this stage waited for its slot.
      const stopped = halt(schedule);
      if (stopped) {
        this.finishStage(node, stopped, started, {
          code: stopped === 'aborted' ? 'interrupted' : 'stopped-after-failure',
          reason: 'not started',
          attempts: 0,
        });
        return;
      }
      // The stage's own signal, aborted with the run's: the run's signal keeps one listener.
      const own = this.stageSignals.child();
      const ctx = this.stages.forRun(inst, () => this.depInstances(node), input.inputs, own.signal, remote !== undefined);
      const outcome = await (remote
        ? remote.run({ inst, ...input }, ctx, this.depInstances(node))
        : this.options.stageCache
          ? this.options.stageCache.run({ inst, ...input }, ctx, runStage)
          : runStage({ inst, ...input }, ctx)
      ).finally(own.release);
      if (outcome.notStarted) {
        // Dropped while it waited in a runner: it ends as a stage that never got a slot does.
        const halted = halt(schedule) ?? 'blocked';
        this.finishStage(node, halted, started, {
          code: halted === 'aborted' ? 'interrupted' : 'stopped-after-failure',
          reason: 'not started',
          attempts: 0,
        });
        return;
      }
      if (outcome.status === 'succeeded') for (const o of Object.values(inst.outputs)) this.stages.artifacts.forget(o.path);
      this.finishStage(node, outcome.status, outcome.startedAt ?? started, outcome);
    };
    // A worker's stage holds no local slot: the workers' own slots and the broker pace them.
    (remote ? job() : this.dispatcher.dispatch(inst.spec.pool, job)).catch((error: unknown) => {
      this.finishStage(node, 'failed', Date.now(), { ...dispatchFailure(error, this.options.root), attempts: 0 });
    });
  }

  private finishStage(
    node: Stage,
    status: StageStatus,
    started: number,
    outcome: Omit<StageOutcome, 'status'> & { remote?: RemoteHit; worker?: string },
  ): void {
    this.schedule.running -= 1;
    this.local.delete(node.id);
    const outputs =
      status === 'succeeded' ? Object.fromEntries(Object.entries(node.stage.outputs).map(([k, o]) => [k, o.path])) : undefined;
    const next = this.settleNode(node, status, {
      code: outcome.code,
      reason: outcome.reason,
      durationMs: Date.now() - started,
      attempts: outcome.attempts,
      ...(outcome.summary ? { summary: outcome.summary } : {}),
      ...(outputs ? { outputs } : {}),
      ...(outcome.issues ? { issues: outcome.issues } : {}),
      ...(outcome.rejectedDir ? { rejectedDir: outcome.rejectedDir } : {}),
      ...(outcome.remote ? { remote: outcome.remote } : {}),
      ...(outcome.worker ? { worker: outcome.worker } : {}),
    });
    // A stop after a failure also drops the stages waiting in runners for a jobserver token.
    if (status === 'failed' && halt(this.schedule)) this.stages.runners?.dropWaiting();
    this.release(next);
    this.checkFinished();
  }

  /** Records a node's end (a stage's with its event) and returns the nodes that became ready. */
  private settleNode(node: Node, status: StageStatus, end: StageEnd): string[] {
    const schedule = this.schedule;
    const ready = settle(schedule, node, status);
    if (node.kind === 'loop') return ready;
    this.reportEnd(node.id, status, end);
    // Last: ending an iteration adds the next one's stages as dependents of this one.
    const gate = node.stage.loop ? this.nodes.get(node.stage.loop.id) : undefined;
    if (gate?.kind === 'loop' && memberSettled(gate)) this.release(this.endIteration(gate));
    return ready;
  }

  private reportEnd(stage: string, status: StageStatus, end: StageEnd): void {
    this.counts[status] += 1;
    const { reason, ...detail } = end;
    this.bus.emit({ type: 'stage-end', stage, status, durationMs: 0, attempts: 0, ...(reason ? { reason } : {}), ...detail });
  }

  private startIteration(gate: Gate, iteration: number): string[] {
    const schedule = this.schedule;
    const { instances, diagnostics } = this.options.expandIteration(gate.loop, iteration);
    if (diagnostics.length > 0) {
      this.diagnostics.push(...diagnostics);
      return this.settleGate(gate, 'failed');
    }
    const deps = iterationDeps(instances.map(instanceNode), (id) => this.nodes.has(id));
    const ready = beginIteration(
      schedule,
      gate,
      iteration,
      instances.map((i) => ({ kind: 'stage' as const, id: i.id, deps: deps.get(i.id) ?? [], stage: i })),
    );
    return instances.length === 0 ? this.endIteration(gate) : ready;
  }

  private endIteration(gate: Gate): string[] {
    const schedule = this.schedule;
    const { loop, iteration } = gate;
    const outcome = iterationOutcome(gate.current.map((n) => n.status));
    if (outcome !== 'passed') return this.settleGate(gate, outcome);
    const current = gate.current.map((n) => n.stage);
    const top = this.plan.instances.filter((i) => this.nodes.get(i.id)?.status !== undefined);
    const until = untilHolds(loop, iteration, {
      params: this.plan.params,
      vars: this.plan.vars,
      pipeline: this.plan.pipeline.name,
      artifacts: this.stages.artifacts.view([...top, ...current]),
    });
    if ('problem' in until) {
      this.diagnostics.push({ severity: 'error', code: 'expression-failed', message: until.problem });
      return this.settleGate(gate, 'failed');
    }
    const decision = loopDecision(until.holds, iteration, loop.max);
    this.bus.emit({ type: 'loop-iteration', loop: loop.id, iteration, decision });
    if (decision === 'continue' && halt(schedule) !== 'aborted') return this.startIteration(gate, iteration + 1);
    return this.settleGate(gate, 'succeeded');
  }

  private settleGate(gate: Gate, status: StageStatus): string[] {
    gate.pending = undefined;
    return settle(this.schedule, gate, status);
  }
}

export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteResult> {
  return new Executor(plan, options).execute();
}
