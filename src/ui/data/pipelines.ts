// Pipelines as the dashboard shows them: loaded and expanded as `refinery run` would (default params,
// or the watch's --param values), each stage instance coloured by what is known of it: the live run,
// the newest run's outcome, the journal, and `refinery plan`'s verdict once it has come back.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../../engine/types/plan.ts';
import { formatDiagnostics } from '../../engine/diagnostics/format.ts';
import { findPipelineFile } from '../../engine/session/find-pipeline.ts';
import { loadPipeline, type LoadedPipeline } from '../../engine/session/open-pipeline.ts';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
import { buildGraph } from '../../engine/graph/graph.ts';
import { selectStages } from '../../engine/graph/select.ts';
import { foldGraph, type FoldInput, type FoldedGraph, type UiStageState } from './graph-fold.ts';
import { JournalReader, type JournalEntry } from './journal.ts';
import type { RunStageStatus, RunStore } from './runs.ts';
import type { PlanAssessor, AssessEntry } from './assess.ts';
import type { RunTracker } from './run-tracker.ts';
import { relativeInProject } from '../safe-path.ts';

type Loaded =
  | { ok: true; pipeline: LoadedPipeline; stamp: string; used: Record<string, string> }
  | { ok: false; error: string; stamp: string };

export interface PipelineSummary {
  name: string;
  file: string;
  description: string | null;
  stages: number;
  loops: number;
  counts: Partial<Record<UiStageState, number>>;
  error: string | null;
}

export interface StageRow {
  id: string;
  stage: string;
  kind: 'task' | 'run' | 'iteration';
  state: UiStageState;
  needs: number;
  lastDurationMs: number | null;
  finishedAt: string | null;
}

/** How many recent runs of a pipeline tell the state of its stages when the dashboard starts. */
const SEED_RUNS = 10;

const PIPELINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isPipelineName(name: string): boolean {
  return PIPELINE_NAME.test(name) && !name.includes('..');
}

/** The state of one stage instance from what is known of it, most telling first. */
export function stageState(
  run: RunStageStatus | undefined,
  runLive: boolean,
  record: JournalEntry | undefined,
  verdict: AssessEntry | undefined,
): UiStageState {
  if (run === 'running' && runLive) return 'running';
  if (run === 'failed') return 'failed';
  if (run === 'blocked') return 'blocked';
  if (run === 'skipped') return 'skipped';
  if (run === 'aborted') return record ? 'stale' : 'never-run';
  if (verdict) {
    switch (verdict.decision) {
      case 'fresh':
        return 'up-to-date';
      case 'skip':
        return 'skipped';
      case 'fail':
        return 'failed';
      case 'maybe':
        return 'stale';
      case 'run':
        return record ? 'stale' : 'never-run';
      case 'loop':
        break;
    }
  }
  if (run === 'succeeded' || run === 'fresh') return 'up-to-date';
  return record ? 'up-to-date' : 'never-run';
}

export class PipelineStore {
  private readonly loaded = new Map<string, Loaded>();
  readonly journal: JournalReader;
  private schemas: SchemaRegistry | undefined;

  constructor(
    private readonly root: string,
    private readonly runs: RunStore,
    private readonly tracker: RunTracker,
    readonly assessor: PlanAssessor,
    private readonly options: { overrides: Readonly<Record<string, string>>; watched: readonly string[] },
  ) {
    this.journal = new JournalReader(root);
  }

  /** Every pipeline of the project (pipelines/), those being watched, and those with recorded state. */
  names(): string[] {
    const names = new Set<string>(this.options.watched);
    const dir = path.join(this.root, 'pipelines');
    if (existsSync(dir)) for (const f of safeReaddir(dir)) if (/\.ya?ml$/.test(f)) names.add(f.replace(/\.ya?ml$/, ''));
    for (const f of safeReaddir(path.join(this.root, '.refinery', 'state')))
      if (f.endsWith('.jsonl')) names.add(f.slice(0, -'.jsonl'.length));
    return [...names]
      .filter(isPipelineName)
      .filter((n) => this.fileOf(n) !== undefined)
      .sort();
  }

  fileOf(name: string): string | undefined {
    if (!isPipelineName(name)) return undefined;
    return findPipelineFile(this.root, name).file;
  }

  /**
   * The params a pipeline is shown with: those of its newest run (its journal describes the stages
   * of that run's params), under the watch's --param values; none when neither exists.
   */
  private overridesFor(name: string): Record<string, string> {
    const out: Record<string, string> = {};
    const latest = this.runs.latest(name);
    const params = latest ? this.runs.startParams(latest.runId) : undefined;
    for (const [k, v] of Object.entries(params ?? {})) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      else if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) out[k] = v.join(',');
    }
    return { ...out, ...this.options.overrides };
  }

  /** The `key=value` params a pipeline is shown with (what `refinery plan` is asked with). */
  paramsFor(name: string): string[] {
    const loaded = this.loaded.get(name);
    const used = loaded?.ok ? loaded.used : this.overridesFor(name);
    const declared = loaded?.ok ? loaded.pipeline.spec.params : undefined;
    return Object.entries(used)
      .filter(([k]) => !declared || k in declared)
      .map(([k, v]) => `${k}=${v}`);
  }

  async load(name: string): Promise<Loaded | undefined> {
    const file = this.fileOf(name);
    if (!file) return undefined;
    let stamp: string;
    try {
      const info = statSync(file);
      stamp = `${info.size}:${info.mtimeMs}`;
    } catch {
      return undefined;
    }
    const used = this.overridesFor(name);
    stamp += `:${JSON.stringify(used)}`;
    const cached = this.loaded.get(name);
    if (cached && cached.stamp === stamp) return cached;
    let applied: Readonly<Record<string, string>> = used;
    let outcome = await loadPipeline(this.root, file, applied);
    // The newest run's params may no longer fit an edited pipeline: then as a plain run would load it.
    if (!outcome.ok && Object.keys(used).length > Object.keys(this.options.overrides).length) {
      applied = this.options.overrides;
      outcome = await loadPipeline(this.root, file, applied);
    }
    const result: Loaded = outcome.ok
      ? {
          ok: true,
          pipeline: outcome.pipeline,
          stamp,
          used: Object.fromEntries(Object.entries(applied).filter(([k]) => k in outcome.pipeline.spec.params)),
        }
      : {
          ok: false,
          error: formatDiagnostics(outcome.diagnostics, {
            sources: new Map([[outcome.file, outcome.source]]),
            color: false,
            cwd: this.root,
          }),
          stamp,
        };
    this.loaded.set(name, result);
    return result;
  }

  /**
   * Seeds the tracker the first time a pipeline is shown: what the pipeline's recent runs said of
   * each stage, the newest run first (a watch runs only what a change touched, so a stage that
   * failed three runs ago and was not run since is still failed).
   */
  private async seedTracker(name: string): Promise<void> {
    if (this.tracker.isSeeded(name)) return;
    const stages = new Map<string, RunStageStatus>();
    let live = false;
    let newest = '';
    let seen = 0;
    for (const runId of this.runs.ids()) {
      const row = this.runs.row(runId);
      if (!row || row.pipeline !== name) continue;
      if (seen === 0) {
        newest = runId;
        live = row.status === 'running';
      }
      seen += 1;
      const detail = await this.runs.detail(runId);
      for (const s of detail?.stages ?? []) if (!stages.has(s.id)) stages.set(s.id, s.status);
      if (seen >= SEED_RUNS) break;
    }
    this.tracker.seed(name, newest, live, stages);
  }

  /** Every instance of the plan (and the newest run's loop iterations) with its state. */
  async states(name: string): Promise<
    | {
        pipeline: LoadedPipeline;
        items: Array<FoldInput & { inst?: StageInstance }>;
        records: Map<string, JournalEntry>;
        assessed: boolean;
      }
    | { error: string }
    | undefined
  > {
    const loaded = await this.load(name);
    if (!loaded) return undefined;
    if (!loaded.ok) return { error: loaded.error };
    const { plan } = loaded.pipeline.expansion;
    const records = this.journal.records(name);
    await this.seedTracker(name);
    const assessment = this.assessor.cached(name);
    const verdicts = assessment?.entries;
    const stateOf = (id: string, verdict: AssessEntry | undefined): UiStageState => {
      const o = this.tracker.outcome(name, id);
      // A verdict made before the stage last ran says nothing about it any more.
      const current = verdict && (!o || o.at < (assessment?.at ?? 0)) ? verdict : undefined;
      return stageState(o?.status, o?.live ?? false, records.get(id), current);
    };
    const items: Array<FoldInput & { inst?: StageInstance }> = plan.instances.map((inst) => ({
      id: inst.id,
      needs: inst.needs,
      kind: 'stage',
      state: stateOf(inst.id, verdicts?.get(inst.id)),
      inst,
    }));
    for (const loop of plan.loops)
      items.push({ id: loop.id, needs: loop.needs, kind: 'loop', state: 'never-run', members: loop.spec.stages.map((s) => s.id) });
    // Loop iterations are expanded as a run reaches them: the runs name them (`loop#2.stage`).
    for (const id of this.tracker.stageIds(name))
      if (id.includes('#')) items.push({ id, needs: [], kind: 'stage', state: stateOf(id, undefined) });
    return { pipeline: loaded.pipeline, items, records, assessed: verdicts !== undefined };
  }

  async summary(name: string): Promise<PipelineSummary | undefined> {
    const states = await this.states(name);
    return states ? this.summarize(name, states) : undefined;
  }

  private summarize(name: string, states: NonNullable<Awaited<ReturnType<PipelineStore['states']>>>): PipelineSummary | undefined {
    const file = this.fileOf(name);
    if (!file) return undefined;
    const rel = relativeInProject(this.root, file) ?? `(refinery) pipelines/${path.basename(file)}`;
    if ('error' in states) return { name, file: rel, description: null, stages: 0, loops: 0, counts: {}, error: states.error };
    const counts: Partial<Record<UiStageState, number>> = {};
    for (const item of states.items) if (item.kind === 'stage') counts[item.state] = (counts[item.state] ?? 0) + 1;
    const { plan } = states.pipeline.expansion;
    return {
      name,
      file: rel,
      description: states.pipeline.spec.description ?? null,
      stages: plan.instances.length,
      loops: plan.loops.length,
      counts,
      error: null,
    };
  }

  async graph(
    name: string,
    maxNodes: number,
  ): Promise<
    { summary: PipelineSummary; graph: FoldedGraph; params: Record<string, unknown>; assessed: boolean } | { error: string } | undefined
  > {
    const states = await this.states(name);
    const summary = states ? this.summarize(name, states) : undefined;
    if (!summary || !states) return undefined;
    if ('error' in states) return { error: states.error };
    return { summary, graph: foldGraph(states.items, maxNodes), params: states.pipeline.params, assessed: states.assessed };
  }

  async stageRows(
    name: string,
    query: string,
    offset: number,
    limit: number,
  ): Promise<{ total: number; rows: StageRow[]; error?: string } | undefined> {
    const states = await this.states(name);
    if (!states) return undefined;
    if ('error' in states) return { total: 0, rows: [], error: states.error };
    const stageItems = states.items.filter((i) => i.kind === 'stage');
    let selected = stageItems;
    if (query.trim() !== '') {
      const nodes = states.items.map((i) => ({ id: i.id, needs: [...i.needs], inputs: [], outputs: [] }));
      const graph = buildGraph(nodes);
      const stateOf = new Map(stageItems.map((i) => [i.id, i.state]));
      const result = selectStages(query, { ids: stageItems.map((i) => i.id), deps: graph.deps, dependents: graph.dependents }, (id) =>
        stateOf.get(id),
      );
      if (!result.ok) return { total: 0, rows: [], error: result.error };
      selected = stageItems.filter((i) => result.ids.has(i.id));
    }
    const rows = selected.slice(offset, offset + limit).map((item): StageRow => {
      const record = states.records.get(item.id);
      return {
        id: item.id,
        stage: item.inst?.stageId ?? item.id,
        kind: item.inst ? item.inst.spec.kind : 'iteration',
        state: item.state,
        needs: item.needs.length,
        lastDurationMs: record?.durationMs ?? null,
        finishedAt: record?.finishedAt ?? null,
      };
    });
    return { total: selected.length, rows };
  }

  /** One stage instance: its spec, why it would run, its outputs checked against their schemas. */
  async stage(name: string, id: string): Promise<Record<string, unknown> | undefined> {
    const states = await this.states(name);
    if (!states || 'error' in states) return undefined;
    const item = states.items.find((i) => i.id === id && i.kind === 'stage');
    if (!item) return undefined;
    const inst = item.inst;
    const record = states.records.get(id);
    const verdict = this.assessor.cached(name)?.entries.get(id);
    const spec = inst?.spec;
    return {
      id,
      pipeline: name,
      stage: inst?.stageId ?? id,
      state: item.state,
      kind: spec?.kind ?? 'iteration',
      description: spec?.description ?? null,
      task: spec?.kind === 'task' ? spec.task : null,
      command: spec?.kind === 'run' ? ('shell' in spec.run ? spec.run.shell.source : spec.run.argv.map((t) => t.source)) : null,
      inputs: inst?.inputs ?? [],
      needs: item.needs,
      vars: inst ? jsonSafe(inst.vars) : {},
      record: record ?? null,
      why: verdict ? { decision: verdict.decision, reasons: verdict.reasons } : null,
      outputs: inst ? Object.entries(inst.outputs).map(([key, out]) => ({ name: key, ...this.checkOutput(out.path, out.schema) })) : [],
    };
  }

  private checkOutput(rel: string, schema: string | undefined): Record<string, unknown> {
    const abs = path.join(this.root, rel);
    let size: number | null = null;
    try {
      const info = statSync(abs);
      if (info.isFile()) size = info.size;
    } catch {
      /* not written yet */
    }
    const base = { path: rel, schema: schema ?? null, exists: size !== null, bytes: size };
    if (size === null || !schema) return { ...base, validation: null };
    if (size > 8 * 1024 * 1024)
      return { ...base, validation: { ok: null, message: `not checked here: ${size} bytes is over the dashboard's 8 MB limit` } };
    try {
      this.schemas ??= new SchemaRegistry(this.root);
      const data = JSON.parse(readFileSync(abs, 'utf8')) as unknown;
      const result = this.schemas.validate(schema, data);
      return { ...base, validation: result.ok ? { ok: true } : { ok: false, issues: result.issues.slice(0, 50) } };
    } catch (error) {
      return { ...base, validation: { ok: false, issues: [{ pointer: '', message: (error as Error).message }] } };
    }
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return null;
  }
}
