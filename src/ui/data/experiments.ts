// The MassGen experiment grids as the dashboard shows them: every pipeline with run-massgen stages
// (the built-in `experiments`, or a project's own), its cells laid out as configs × questions ×
// repeats. A cell's config, question and repeat are its stage's `with:` params rendered as a run
// would render them; its outcome is its experiment.json; while it runs, its fraction, phase, agents
// and log dir come from the live events (stage-progress, and the stage-log line naming the log dir).
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lazyRecord } from '../../engine/expr/evaluate.ts';
import { renderWith, scopeFor } from '../../engine/executor/render.ts';
import type { RunEvent } from '../../engine/types/events.ts';
import type { StageInstance } from '../../engine/types/plan.ts';
import { logDirOf, parseProgressLine } from '../../workflows/massgen/experiments/progress-line.ts';
import type { UiStageState } from './graph-fold.ts';
import { isObject } from './jsonl.ts';
import type { PipelineStore } from './pipelines.ts';
import type { RunStore } from './runs.ts';

/** The task whose stages are experiment cells, and the one that analyzes a cell's log. */
export const CELL_TASK = 'run-massgen';
const ANALYZE_TASK = 'analyze-experiment';
/** How long the map of turn folders to their cells' analyses is trusted before the grids are read again. */
const ANALYSES_TTL_MS = 2000;

export interface ExperimentCell {
  /** The stage instance: `run[configs/a.yaml, What is 2+2?, 1]`. */
  stage: string;
  config: string;
  question: string;
  repeat: number;
  /** The stage's state; `failed` too when its run finished but MassGen failed. */
  state: UiStageState;
  /** While it runs: completion_percentage / 100, the phase and each agent's status. */
  fraction: number | null;
  phase: string | null;
  agents: Array<{ id: string; status: string }>;
  /** The run (refinery's) that runs it now. */
  runId: string | null;
  /** Root-relative: MassGen's log dir of the cell's newest run, and its turn (the report page). */
  logDir: string | null;
  turnDir: string | null;
  winner: string | null;
  ok: boolean | null;
  durationMs: number | null;
  /** Why MassGen failed: the exit, or the timeout. */
  failure: string | null;
}

export interface ExperimentGrid {
  pipeline: string;
  configs: string[];
  questions: string[];
  repeats: number[];
  cells: ExperimentCell[];
}

interface LiveCell {
  runId: string;
  fraction: number;
  message: string | null;
  logDir: string | null;
}

interface CellRecord {
  logDir: string | null;
  turnDir: string | null;
  winner: string | null;
  ok: boolean | null;
  durationMs: number | null;
  failure: string | null;
}

const RECORD_CAP = 1024 * 1024;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const taskOf = (inst: StageInstance): string | undefined => (inst.spec.kind === 'task' ? inst.spec.task : undefined);

/** The run's params and vars, as its plan holds them. */
interface Given {
  params: Record<string, unknown>;
  vars: Record<string, unknown>;
}

/** A stage's `with:` rendered as a run renders it (no artifact read); undefined when it does not render. */
function renderedWith(inst: StageInstance, pipeline: string, given: Given): Record<string, unknown> | undefined {
  if (inst.spec.kind !== 'task') return undefined;
  const scope = scopeFor(inst, {
    params: given.params,
    vars: given.vars,
    pipeline,
    artifacts: lazyRecord(() => undefined),
    outputs: Object.fromEntries(Object.entries(inst.outputs).map(([k, o]) => [k, o.path])),
    inputs: inst.inputs,
    exists: () => false,
  });
  try {
    const rendered = renderWith(inst.spec.with, scope);
    return isObject(rendered) ? rendered : undefined;
  } catch {
    return undefined;
  }
}

function renderedParam(inst: StageInstance, pipeline: string, given: Given, key: string): unknown {
  return renderedWith(inst, pipeline, given)?.[key];
}

/** config, question and repeat of a cell's stage, from its rendered `with:`. */
function cellParams(inst: StageInstance, pipeline: string, given: Given): { config: string; question: string; repeat: number } | undefined {
  const rendered = renderedWith(inst, pipeline, given);
  if (!rendered || typeof rendered.config !== 'string' || typeof rendered.question !== 'string') return undefined;
  const repeat = Number(rendered.repeat ?? 1);
  return { config: rendered.config, question: rendered.question, repeat: Number.isInteger(repeat) ? repeat : 1 };
}

export class ExperimentStore {
  private readonly live = new Map<string, LiveCell>();
  private readonly records = new Map<string, { stamp: string; record: CellRecord | null }>();
  /** Root-relative turn folder -> absolute folder of its cell's analysis.json. */
  private analyses = new Map<string, string>();
  private analysesRead: { at: number; done: Promise<unknown> } | undefined;

  constructor(
    private readonly root: string,
    private readonly pipelines: PipelineStore,
    private readonly runs: RunStore,
  ) {}

  /** Fed every live run event (dashboard.ts subscribes it to the hub). */
  apply(event: RunEvent): void {
    if (event.type === 'run-end') {
      for (const [key, cell] of this.live) if (cell.runId === event.runId) this.live.delete(key);
      return;
    }
    if (!('stage' in event)) return;
    // Every running stage is kept (a handful at a time): the event does not say which task it runs.
    const key = `${event.pipeline}\0${event.stage}`;
    if (event.type === 'stage-start') {
      this.live.set(key, { runId: event.runId, fraction: 0, message: null, logDir: null });
      return;
    }
    if (event.type === 'stage-end') {
      this.live.delete(key);
      return;
    }
    // A stage that started before this dashboard did is met first by its progress.
    let cell = this.live.get(key);
    if (!cell) {
      if (event.type !== 'stage-progress' && event.type !== 'stage-log') return;
      cell = { runId: event.runId, fraction: 0, message: null, logDir: null };
      this.live.set(key, cell);
    }
    if (event.type === 'stage-progress') {
      cell.fraction = event.fraction;
      cell.message = event.message ?? null;
    } else if (event.type === 'stage-log') cell.logDir = logDirOf(event.message) ?? cell.logDir;
  }

  /** The grid of every pipeline that has experiment cells. */
  async grids(): Promise<ExperimentGrid[]> {
    const out: ExperimentGrid[] = [];
    const analyses = new Map<string, string>();
    for (const name of this.pipelines.names()) {
      const grid = await this.grid(name, analyses);
      if (grid) out.push(grid);
    }
    this.analyses = analyses;
    return out;
  }

  /**
   * Where the experiments pipeline put the analysis of a MassGen turn (it writes analysis.json
   * beside the cell's experiment.json, not into MassGen's log): absolute, or undefined.
   */
  async analysisDirFor(turnDir: string): Promise<string | undefined> {
    if (!this.analysesRead || Date.now() - this.analysesRead.at > ANALYSES_TTL_MS)
      this.analysesRead = { at: Date.now(), done: this.grids().catch(() => undefined) };
    await this.analysesRead.done;
    return this.analyses.get(turnDir);
  }

  async grid(name: string, analyses = new Map<string, string>()): Promise<ExperimentGrid | undefined> {
    const states = await this.pipelines.states(name);
    if (!states || 'error' in states) return undefined;
    const { params, vars } = states.pipeline.expansion.plan;
    const given: Given = { params, vars: vars ?? {} };
    const cells: ExperimentCell[] = [];
    // experiment.json -> the analysis an analyze-experiment stage makes of it.
    const analysisOf = new Map<string, string>();
    for (const item of states.items) {
      const inst = item.inst;
      if (!inst || taskOf(inst) !== ANALYZE_TASK || !inst.outputs.analysis) continue;
      const experiment = renderedParam(inst, name, given, 'experiment');
      if (typeof experiment === 'string') analysisOf.set(path.normalize(experiment), inst.outputs.analysis.path);
    }
    for (const item of states.items) {
      const inst = item.inst;
      if (!inst || taskOf(inst) !== CELL_TASK) continue;
      const where = cellParams(inst, name, given);
      if (!where) continue;
      const experimentPath = inst.outputs.experiment?.path;
      const record = this.record(experimentPath);
      const analysis = experimentPath ? analysisOf.get(path.normalize(experimentPath)) : undefined;
      if (record?.turnDir && analysis && existsSync(path.join(this.root, analysis)))
        analyses.set(record.turnDir, path.dirname(path.join(this.root, analysis)));
      const live = item.state === 'running' ? this.live.get(`${name}\0${inst.id}`) : undefined;
      const line = live?.message ? parseProgressLine(live.message) : undefined;
      const logDir =
        live?.logDir ?? (item.state === 'running' ? await this.logDirFromJournal(name, inst.id) : null) ?? record?.logDir ?? null;
      cells.push({
        stage: inst.id,
        ...where,
        state: item.state !== 'running' && record?.ok === false ? 'failed' : item.state,
        fraction: item.state === 'running' ? (live?.fraction ?? 0) : null,
        phase: item.state === 'running' ? (line?.phase ?? 'starting') : null,
        agents: line?.agents ?? [],
        runId: live?.runId ?? null,
        logDir,
        // A running cell's old turn is not its current one.
        turnDir: item.state === 'running' ? null : (record?.turnDir ?? null),
        winner: item.state === 'running' ? null : (record?.winner ?? null),
        ok: item.state === 'running' ? null : (record?.ok ?? null),
        durationMs: item.state === 'running' ? null : (record?.durationMs ?? null),
        failure: item.state === 'running' ? null : (record?.failure ?? null),
      });
    }
    if (cells.length === 0) return undefined;
    const unique = <T>(values: T[]): T[] => [...new Set(values)];
    return {
      pipeline: name,
      configs: unique(cells.map((c) => c.config)),
      questions: unique(cells.map((c) => c.question)),
      repeats: unique(cells.map((c) => c.repeat)).sort((a, b) => a - b),
      cells,
    };
  }

  /**
   * A cell that was already running when this dashboard started (it tails only what is written
   * from then on): the log dir line its stage logged, from the newest run's journal.
   */
  private async logDirFromJournal(pipeline: string, stage: string): Promise<string | null> {
    const latest = this.runs.latest(pipeline);
    if (latest?.status !== 'running') return null;
    const { lines } = await this.runs.logs(latest.runId, stage, 50);
    for (const line of lines) {
      const dir = logDirOf(line.message);
      if (dir) {
        const live = { runId: latest.runId, fraction: 0, message: null, logDir: dir };
        this.live.set(`${pipeline}\0${stage}`, live);
        return dir;
      }
    }
    return null;
  }

  /** What a cell's experiment.json says, read again only when it changed. */
  private record(rel: string | undefined): CellRecord | null {
    if (!rel) return null;
    const file = path.join(this.root, rel);
    let stamp: string;
    try {
      const info = lstatSync(file);
      if (!info.isFile() || info.size > RECORD_CAP) return null;
      stamp = `${info.size}:${info.mtimeMs}`;
    } catch {
      return null;
    }
    const cached = this.records.get(file);
    if (cached?.stamp === stamp) return cached.record;
    let record: CellRecord | null = null;
    try {
      const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (isObject(value))
        record = {
          logDir: str(value.log_dir),
          turnDir: str(value.turn_dir),
          winner: str(value.winner),
          ok: typeof value.ok === 'boolean' ? value.ok : null,
          durationMs: typeof value.duration_ms === 'number' ? value.duration_ms : null,
          failure:
            value.ok === false ? (value.timed_out === true ? 'timed out' : `exit ${String(value.exit_code ?? value.signal ?? '?')}`) : null,
        };
    } catch {
      record = null;
    }
    this.records.set(file, { stamp, record });
    return record;
  }
}
