import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import type { LoopInstance, Plan, StageInstance } from '../model/plan.ts';
import type { Diagnostic } from '../model/source.ts';
import type { RunStatus, StageStatus } from '../model/events.ts';
import type { EventBus } from '../events/bus.ts';
import type { SchemaRegistry } from '../artifacts/schema-registry.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import { hashText } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import type { Observations } from '../state/observations.ts';
import { describeFsError, isFsError, type WriteProblem } from '../state/write-problem.ts';
import { dropManifest, UNCHANGED_BY_STAT } from '../state/run-manifest.ts';
import { RunnerPool, runnerPoolSupported } from '../shell/runner-pool.ts';
import { createRunBudget } from './budget.ts';
import type { RunBudget } from '../task/define-task.ts';
import { buildGraph, findCycle, upstreamOf, type GraphNode } from '../graph/graph.ts';
import { evaluateCondition, ExprEvalError } from '../expr/evaluate.ts';
import { ArtifactReader } from './artifact-reader.ts';
import { fingerprintParts } from './fingerprint.ts';
import { scopeFor } from './render.ts';
import { assessStage, stageCodeHash, type AssessContext } from './assess.ts';
import { runStage, type StageRunContext } from './stage-runner.ts';
import { stagingDir } from './staging.ts';

export interface ExecuteOptions {
  root: string;
  runId: string;
  bus: EventBus;
  signal: AbortSignal;
  concurrency: number;
  force: boolean;
  keepGoing: boolean;
  /** Stage or instance ids to run, with what they need; all when empty. */
  only: readonly string[];
  /**
   * Instance and loop ids to assess (and run when stale); every other instance counts as
   * settled with the fingerprint recorded in `state`, without an event and without being
   * counted. All when absent. The watch daemon passes the stages a change affects, what is
   * downstream of them, and the upstream ones that have no record (or are loops).
   */
  select?: ReadonlySet<string>;
  /** Emit an up-to-date stage-end for every stage outside `select` (refinery run does; watch does not). */
  reportUnselected?: boolean;
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
}

export interface ExecuteResult {
  status: RunStatus;
  counts: Record<StageStatus, number>;
  diagnostics: Diagnostic[];
  /** State files the run could not write at its end (a full disk): the run counts as failed. */
  writeProblems: WriteProblem[];
}

interface Node {
  id: string;
  inst?: StageInstance;
  loop?: LoopInstance;
  deps: string[];
  dependents: string[];
  waiting: number;
  status?: StageStatus;
  fingerprint?: string;
  /** For a loop gate: instance ids of its current iteration still unfinished. */
  pending?: number;
  iteration?: number;
  members?: StageInstance[];
}

const ZERO_COUNTS = (): Record<StageStatus, number> => ({ succeeded: 0, failed: 0, fresh: 0, skipped: 0, blocked: 0, aborted: 0 });

function graphNodes(plan: Plan): GraphNode[] {
  const nodes: GraphNode[] = plan.instances.map((i) => ({ id: i.id, needs: i.needs, inputs: i.inputs, outputs: Object.values(i.outputs).map((o) => o.path) }));
  for (const l of plan.loops) nodes.push({ id: l.id, needs: l.needs, inputs: [], outputs: [] });
  return nodes;
}

export class Executor {
  private readonly nodes = new Map<string, Node>();
  private readonly counts = ZERO_COUNTS();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly queue: PQueue;
  private readonly pools = new Map<string, PQueue>();
  private readonly artifacts: ArtifactReader;
  private readonly codeHashes = new Map<string, string>();
  private stopped = false;
  private runners: RunnerPool | undefined;
  private readonly budget: RunBudget;
  private failed = false;
  private running = 0;
  private unsettled = 0;
  private finish: () => void = () => {};

  constructor(
    private readonly plan: Plan,
    private readonly options: ExecuteOptions,
  ) {
    this.queue = new PQueue({ concurrency: Math.max(1, options.concurrency) });
    for (const [name, size] of Object.entries(plan.pipeline.pools)) this.pools.set(name, new PQueue({ concurrency: size }));
    this.artifacts = new ArtifactReader(options.root);
    this.budget = createRunBudget(options.budgetUsd);
  }

  private get bus(): EventBus {
    return this.options.bus;
  }

  /** Builds the graph; returns a located problem instead of running when there is a cycle. */
  private build(): boolean {
    const graph = buildGraph(graphNodes(this.plan));
    const cycle = findCycle(graph.deps);
    if (cycle) {
      this.diagnostics.push({ severity: 'error', message: `dependency cycle: ${cycle.join(' -> ')}` });
      return false;
    }
    let selected: Set<string> | undefined;
    if (this.options.only.length > 0) {
      const wanted = [...graph.deps.keys()].filter((id) => this.options.only.some((o) => id === o || id.startsWith(`${o}[`) || this.nodeStage(id) === o));
      if (wanted.length === 0) {
        this.diagnostics.push({ severity: 'error', message: `--only ${this.options.only.join(',')}: no such stage in pipeline '${this.plan.pipeline.name}'` });
        return false;
      }
      selected = upstreamOf(wanted, graph.deps);
    }
    for (const inst of this.plan.instances) if (!selected || selected.has(inst.id)) this.addNode({ id: inst.id, inst, deps: graph.deps.get(inst.id) ?? [] });
    for (const loop of this.plan.loops) if (!selected || selected.has(loop.id)) this.addNode({ id: loop.id, loop, deps: graph.deps.get(loop.id) ?? [] });
    for (const node of this.nodes.values()) {
      node.deps = node.deps.filter((d) => this.nodes.has(d));
      node.waiting = node.deps.length;
      for (const d of node.deps) this.nodes.get(d)?.dependents.push(node.id);
    }
    if (this.options.select) this.settleUnselected(this.options.select);
    return true;
  }

  /** Nodes outside `select` are done already: their recorded fingerprint stands in for a run. */
  private settleUnselected(select: ReadonlySet<string>): void {
    for (const node of this.nodes.values()) {
      if (select.has(node.id)) continue;
      node.status = 'fresh';
      node.fingerprint = node.inst ? (this.options.state.get(node.id)?.fingerprint ?? 'none') : 'none';
      this.unsettled -= 1;
      if (node.inst) this.unselected.push(node.id);
    }
    for (const node of this.nodes.values()) node.waiting = node.deps.filter((d) => (this.nodes.get(d) as Node).status === undefined).length;
  }

  private stageOf: Map<string, string> | undefined;
  private readonly unselected: string[] = [];

  private nodeStage(id: string): string | undefined {
    this.stageOf ??= new Map(this.plan.instances.map((i) => [i.id, i.stageId]));
    return this.stageOf.get(id);
  }

  private addNode(partial: Pick<Node, 'id' | 'deps'> & Partial<Node>): Node {
    const node: Node = { dependents: [], waiting: 0, ...partial };
    this.nodes.set(node.id, node);
    this.unsettled += 1;
    return node;
  }

  async execute(): Promise<ExecuteResult> {
    const started = Date.now();
    if (!this.build()) return { status: 'failed', counts: this.counts, diagnostics: this.diagnostics, writeProblems: [] };
    // Whatever this run changes, the last run's no-op record no longer holds.
    dropManifest(this.options.root, this.plan.pipeline.file);
    const stages = this.options.select && !this.options.reportUnselected ? this.plan.instances.filter((i) => this.nodes.get(i.id)?.status === undefined).length : this.plan.instances.length;
    this.bus.emit({ type: 'run-start', stages, params: this.plan.params, concurrency: this.options.concurrency });
    if (this.options.reportUnselected) {
      for (const id of this.unselected) {
        const skip = this.options.previouslySkipped?.get(id);
        this.bus.emit({ type: 'stage-end', stage: id, status: skip === undefined ? 'fresh' : 'skipped', durationMs: 0, attempts: 0, reason: skip ?? UNCHANGED_BY_STAT });
        if (skip === undefined) this.counts.fresh += 1;
        else this.counts.skipped += 1;
      }
    }
    const done = new Promise<void>((resolve) => {
      this.finish = resolve;
    });
    const onAbort = (): void => {
      this.stopped = true;
    };
    this.options.signal.addEventListener('abort', onAbort, { once: true });
    this.release([...this.nodes.values()].filter((n) => n.waiting === 0).map((n) => n.id));
    this.checkFinished();
    await done;
    this.options.signal.removeEventListener('abort', onAbort);
    this.runners?.close();
    const writeProblems = [this.options.hashes.save(), this.options.state.compact()].filter((p): p is WriteProblem => p !== undefined);
    this.options.state.close();
    this.cleanStaging();
    const status: RunStatus = this.options.signal.aborted ? 'aborted' : this.failed || writeProblems.length > 0 ? 'failed' : 'succeeded';
    this.bus.emit({ type: 'run-end', status, durationMs: Date.now() - started, counts: this.counts });
    return { status, counts: this.counts, diagnostics: this.diagnostics, writeProblems };
  }

  private cleanStaging(): void {
    const dir = stagingDir(this.options.root, this.options.runId);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }

  private checkFinished(): void {
    if (this.running > 0) return;
    if (this.unsettled === 0) this.finish();
    else if (this.stopped || (this.failed && !this.options.keepGoing)) {
      for (const n of this.nodes.values()) if (n.status === undefined) this.settle(n, this.options.signal.aborted ? 'aborted' : 'blocked', this.stopped ? 'run interrupted' : 'not started: an earlier stage failed (use --keep-going to continue past failures)');
      this.finish();
    }
  }

  /** Handles every node whose dependencies are all finished; fresh stages settle without a slot. */
  private release(ids: string[]): void {
    const work = [...ids];
    while (work.length > 0) {
      const node = this.nodes.get(work.shift() as string) as Node;
      if (node.status !== undefined) continue;
      const next = this.consider(node);
      work.push(...next);
    }
  }

  /** Decides what to do with a ready node; returns ids that became ready as a result. */
  private consider(node: Node): string[] {
    if (this.stopped || (this.failed && !this.options.keepGoing)) return [];
    const badDep = node.deps.map((d) => this.nodes.get(d) as Node).find((d) => d.status === 'failed' || d.status === 'blocked' || d.status === 'aborted');
    if (badDep) return this.settle(node, 'blocked', `needs '${badDep.id}', which ${badDep.status === 'failed' ? 'failed' : 'did not run'}`);
    if (node.loop) return this.startLoop(node);
    return this.considerStage(node, node.inst as StageInstance);
  }

  private depInstances(node: Node): StageInstance[] {
    const out: StageInstance[] = [];
    for (const d of node.deps) {
      const dep = this.nodes.get(d) as Node;
      if (dep.inst) out.push(dep.inst);
      if (dep.members) out.push(...dep.members);
    }
    return out;
  }

  private scopeFor(inst: StageInstance, node: Node, outputs: Record<string, string>, inputs: readonly string[]) {
    return scopeFor(inst, {
      params: this.plan.params,
      pipeline: this.plan.pipeline.name,
      artifacts: this.artifacts.view(this.depInstances(node)),
      outputs,
      inputs,
      exists: (p) => existsSync(path.join(this.options.root, p)),
    });
  }

  private makeRunnerPool(): RunnerPool {
    const scratch = stagingDir(this.options.root, this.options.runId);
    mkdirSync(scratch, { recursive: true });
    return new RunnerPool(this.options.root, scratch);
  }

  private get assessContext(): AssessContext {
    return {
      root: this.options.root,
      params: this.plan.params,
      pipeline: this.plan.pipeline.name,
      hashes: this.options.hashes,
      force: this.options.force,
      codeHash: (inst) => this.codeHash(inst),
      schemaFile: this.options.schemaFile,
      selfArtifacts: (inst) => this.artifacts.own(inst),
      ...(this.options.observations ? { observations: this.options.observations } : {}),
    };
  }

  private codeHash(inst: StageInstance): string {
    const key = inst.spec.kind === 'task' ? inst.spec.task : undefined;
    const known = key === undefined ? undefined : this.codeHashes.get(key);
    if (known !== undefined) return known;
    const h = stageCodeHash(inst, this.options.root, this.options.hashes, this.options.taskFile, this.options.observations);
    if (key !== undefined) this.codeHashes.set(key, h);
    return h;
  }


  private considerStage(node: Node, inst: StageInstance): string[] {
    const deps: Record<string, string> = {};
    for (const d of node.deps) deps[d] = (this.nodes.get(d) as Node).fingerprint ?? 'none';
    const verdict = assessStage(inst, deps, this.artifacts.view(this.depInstances(node)), this.options.state.get(inst.id), this.assessContext);
    switch (verdict.kind) {
      case 'skip':
        return this.settle(node, 'skipped', verdict.reason);
      case 'fail':
        return this.settle(node, 'failed', verdict.reason);
      case 'fresh':
        node.fingerprint = verdict.fingerprint;
        return this.settle(node, 'fresh', 'up to date');
      case 'run':
        this.enqueue(node, inst, { fingerprint: verdict.fingerprint, parts: verdict.parts, inputs: verdict.inputs, reason: verdict.reasons.join('; ') });
        return [];
    }
  }

  private enqueue(node: Node, inst: StageInstance, input: { fingerprint: string; parts: ReturnType<typeof fingerprintParts>; inputs: string[]; reason: string }): void {
    this.running += 1;
    const ctx: StageRunContext = {
      root: this.options.root,
      runId: this.options.runId,
      bus: this.bus,
      signal: this.options.signal,
      hashes: this.options.hashes,
      state: this.options.state,
      schemas: this.options.schemas,
      taskFile: this.options.taskFile,
      budget: this.budget,
      ...(this.options.observations ? { observations: this.options.observations } : {}),
      scope: (outputs) => this.scopeFor(inst, node, outputs, input.inputs),
      ...(inst.spec.kind === 'run' && runnerPoolSupported() ? { runners: (this.runners ??= this.makeRunnerPool()) } : {}),
    };
    const job = async (): Promise<void> => {
      const started = Date.now();
      if (this.stopped || (this.failed && !this.options.keepGoing)) {
        this.finishNode(node, this.stopped ? 'aborted' : 'blocked', started, { reason: 'not started', attempts: 0 });
        return;
      }
      const outcome = await runStage({ inst, ...input }, ctx);
      if (outcome.status === 'succeeded') {
        node.fingerprint = input.fingerprint;
        for (const o of Object.values(inst.outputs)) this.artifacts.forget(o.path);
      }
      this.finishNode(node, outcome.status, started, outcome);
    };
    const pool = inst.spec.pool ? this.pools.get(inst.spec.pool) : undefined;
    const run = pool ? () => pool.add(() => this.queue.add(job)) : () => this.queue.add(job);
    run().catch((error: unknown) => {
      // A file-system failure (a full disk) is the machine's, not a bug: one line, no stack.
      const reason = isFsError(error) ? describeFsError(error, this.options.root) : `internal error: ${(error as Error).stack ?? String(error)}`;
      this.finishNode(node, 'failed', Date.now(), { reason, attempts: 0 });
    });
  }

  private finishNode(node: Node, status: StageStatus, started: number, outcome: { reason?: string; summary?: string; attempts: number; issues?: import('../model/events.ts').ArtifactIssue[]; rejectedDir?: string }): void {
    this.running -= 1;
    if (status === 'failed') this.failed = true;
    const outputs = status === 'succeeded' && node.inst ? Object.fromEntries(Object.entries(node.inst.outputs).map(([k, o]) => [k, o.path])) : undefined;
    const next = this.settle(node, status, outcome.reason, {
      durationMs: Date.now() - started,
      attempts: outcome.attempts,
      ...(outcome.summary ? { summary: outcome.summary } : {}),
      ...(outputs ? { outputs } : {}),
      ...(outcome.issues ? { issues: outcome.issues } : {}),
      ...(outcome.rejectedDir ? { rejectedDir: outcome.rejectedDir } : {}),
    });
    this.release(next);
    this.checkFinished();
  }

  /** Records a node's final status, emits its event, and returns dependents that became ready. */
  private settle(node: Node, status: StageStatus, reason: string | undefined, extra: { durationMs?: number; attempts?: number; summary?: string; outputs?: Record<string, string>; issues?: import('../model/events.ts').ArtifactIssue[]; rejectedDir?: string } = {}): string[] {
    node.status = status;
    this.unsettled -= 1;
    if (status === 'failed') this.failed = true;
    if (status === 'skipped') node.fingerprint = 'skipped';
    // Counted with its stage-end event: a loop gate has none, so its own status is not counted.
    if (node.inst) {
      this.counts[status] += 1;
      this.bus.emit({ type: 'stage-end', stage: node.id, status, durationMs: extra.durationMs ?? 0, attempts: extra.attempts ?? 0, ...(reason ? { reason } : {}), ...extra });
    }
    const ready: string[] = [];
    for (const d of node.dependents) {
      const dep = this.nodes.get(d) as Node;
      dep.waiting -= 1;
      if (dep.waiting === 0) ready.push(d);
    }
    // Last, because finishing a loop iteration adds the next one's nodes as dependents of this one.
    if (node.inst?.loop) this.memberDone(node.inst.loop.id);
    return ready;
  }

  // Loops: a gate node expands one iteration at a time and settles when `until` holds or max is reached.

  private startLoop(node: Node): string[] {
    return this.startIteration(node, 1);
  }

  private startIteration(node: Node, iteration: number): string[] {
    const loop = node.loop as LoopInstance;
    const { instances, diagnostics } = this.options.expandIteration(loop, iteration);
    if (diagnostics.length > 0) {
      this.diagnostics.push(...diagnostics);
      this.failed = true;
      return this.settleGate(node, 'failed');
    }
    node.iteration = iteration;
    node.members = [...(node.members ?? []), ...instances];
    node.pending = instances.length;
    const byId = new Set(instances.map((i) => i.id));
    const graph = buildGraph(instances.map((i) => ({ id: i.id, needs: i.needs.filter((n) => byId.has(n)), inputs: i.inputs, outputs: Object.values(i.outputs).map((o) => o.path) })));
    for (const inst of instances) {
      const outside = inst.needs.filter((n) => !byId.has(n) && this.nodes.has(n));
      this.addNode({ id: inst.id, inst, deps: [...(graph.deps.get(inst.id) ?? []), ...outside] });
    }
    for (const inst of instances) {
      const n = this.nodes.get(inst.id) as Node;
      n.waiting = n.deps.filter((d) => (this.nodes.get(d) as Node).status === undefined).length;
      for (const d of n.deps) this.nodes.get(d)?.dependents.push(n.id);
    }
    if (instances.length === 0) return this.endIteration(node);
    return instances.filter((i) => (this.nodes.get(i.id) as Node).waiting === 0).map((i) => i.id);
  }

  private memberDone(loopId: string): void {
    const gate = this.nodes.get(loopId);
    if (!gate || gate.pending === undefined) return;
    gate.pending -= 1;
    if (gate.pending === 0) this.release(this.endIteration(gate));
  }

  private endIteration(node: Node): string[] {
    const loop = node.loop as LoopInstance;
    const iteration = node.iteration ?? 1;
    const current = (node.members ?? []).filter((m) => m.loop?.iteration === iteration);
    if (current.some((m) => (this.nodes.get(m.id) as Node).status !== 'succeeded' && (this.nodes.get(m.id) as Node).status !== 'fresh' && (this.nodes.get(m.id) as Node).status !== 'skipped')) {
      return this.settleGate(node, current.some((m) => this.nodes.get(m.id)?.status === 'aborted') ? 'aborted' : 'blocked');
    }
    let done = false;
    if (loop.spec.until) {
      const top = this.plan.instances.filter((i) => this.nodes.get(i.id)?.status !== undefined);
      try {
        done = evaluateCondition(loop.spec.until, {
          vars: { params: this.plan.params, pipeline: { name: this.plan.pipeline.name }, stage: { id: loop.id }, loop: { iteration, round: String(iteration).padStart(3, '0'), max: loop.max }, artifacts: this.artifacts.view([...top, ...current]) },
        });
      } catch (error) {
        if (!(error instanceof ExprEvalError)) throw error;
        this.diagnostics.push({ severity: 'error', message: `loop '${loop.id}' until: ${error.message}` });
        return this.settleGate(node, 'failed');
      }
    }
    const decision = done ? 'done' : iteration >= loop.max ? 'max-reached' : 'continue';
    this.bus.emit({ type: 'loop-iteration', loop: loop.id, iteration, decision });
    if (decision === 'continue' && !this.stopped) return this.startIteration(node, iteration + 1);
    return this.settleGate(node, 'succeeded');
  }

  private settleGate(node: Node, status: StageStatus): string[] {
    node.pending = undefined;
    if (status === 'failed') this.failed = true;
    node.fingerprint = hashText((node.members ?? []).map((m) => this.nodes.get(m.id)?.fingerprint ?? '').join(','));
    node.status = status;
    this.unsettled -= 1;
    const ready: string[] = [];
    for (const d of node.dependents) {
      const dep = this.nodes.get(d) as Node;
      dep.waiting -= 1;
      if (dep.waiting === 0) ready.push(d);
    }
    return ready;
  }
}

export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteResult> {
  return new Executor(plan, options).execute();
}
