import { readFileSync } from 'node:fs';
import type { Plan, StageInstance } from '../types/plan.ts';
import type { PipelineSpec, StageSpec } from '../types/pipeline.ts';
import type { SourceSpan } from '../types/source.ts';
import { buildGraph, downstreamOf } from '../graph/graph.ts';
import { isGlob, matchGlob } from '../paths/glob.ts';
import { writeFileAtomicSync } from '../state/atomic-file.ts';
import { manifestFile } from '../state/run-manifest.ts';
import { writeProblem, type WriteProblem } from '../state/write-problem.ts';
import { packStage, unpackStage } from './compact-spec.ts';

/**
 * The expanded plan of the run that wrote the no-op record, kept beside it so a run in which a
 * few files changed reads back only the stages they reach. The record's key covers the
 * pipeline text, the params and refinery's version, and the no-op record's folder listings and
 * `exists()` answers cover the rest of what expansion looks at: while the key matches and only
 * plain file stats differ, expanding again would give this same plan.
 *
 * The first line is the header (the key, the pipeline without its stages, the params and an
 * index: input and output path -> instance ids, the graph's edges, where each instance's line
 * is); one line per instance follows, parsed only when that instance is needed.
 */
interface Header {
  key: string;
  pipeline: Record<string, unknown>;
  params: Record<string, unknown>;
  /** Non-glob input path -> ids reading it (a folder input also covers the files under it). */
  inputs: Record<string, string[]>;
  /** Output path -> ids writing it. */
  outputs: Record<string, string[]>;
  /** [glob, id] for every glob input. */
  globs: Array<[string, string]>;
  dependents: Record<string, string[]>;
  deps: Record<string, string[]>;
  /** id -> [start, end) of its line in the body (string offsets). */
  at: Record<string, [number, number]>;
}

type Locate = (path: Array<string | number>) => SourceSpan | undefined;

export function planRecordFile(root: string, pipelineFile: string): string {
  return manifestFile(root, pipelineFile).replace(/noop-([^/]*)\.json$/, 'plan-$1.jsonl');
}

function push(map: Record<string, string[]>, key: string, id: string): void {
  (map[key] ??= []).push(id);
}

/** Written after a successful run with no loops, beside the no-op record; a failed write (a full disk) is returned, as the no-op record's is. */
export function writePlanRecord(root: string, key: string, plan: Plan): WriteProblem | undefined {
  const graph = buildGraph(
    plan.instances.map((i) => ({ id: i.id, needs: i.needs, inputs: i.inputs, outputs: Object.values(i.outputs).map((o) => o.path) })),
  );
  const header: Header = {
    key,
    pipeline: { ...plan.pipeline, stages: [] },
    params: plan.params,
    inputs: {},
    outputs: {},
    globs: [],
    dependents: {},
    deps: {},
    at: {},
  };
  const lines: string[] = [];
  let offset = 0;
  for (const inst of plan.instances) {
    for (const o of Object.values(inst.outputs)) push(header.outputs, o.path, inst.id);
    for (const input of inst.inputs) {
      if (isGlob(input)) header.globs.push([input, inst.id]);
      else push(header.inputs, input, inst.id);
    }
    const dependents = graph.dependents.get(inst.id) ?? [];
    if (dependents.length > 0) header.dependents[inst.id] = dependents;
    const deps = graph.deps.get(inst.id) ?? [];
    if (deps.length > 0) header.deps[inst.id] = deps;
    const { spec, ...rest } = inst;
    const line = JSON.stringify({ ...rest, spec: packStage(spec) });
    header.at[inst.id] = [offset, offset + line.length];
    lines.push(line);
    offset += line.length + 1;
  }
  const file = planRecordFile(root, plan.pipeline.file);
  try {
    writeFileAtomicSync(file, `${JSON.stringify(header)}\n${lines.join('\n')}\n`);
  } catch (error) {
    return writeProblem(file, error);
  }
  return undefined;
}

/** The stages the changed files reach, as `affectedStages` finds them from the whole plan; undefined when a file is no stage's input or output. */
function affectedFromIndex(header: Header, changed: readonly string[]): Set<string> | undefined {
  const hit = new Set<string>();
  for (const f of changed) {
    let explained = false;
    const add = (ids: readonly string[] | undefined): void => {
      if (!ids || ids.length === 0) return;
      explained = true;
      for (const id of ids) hit.add(id);
    };
    add(header.outputs[f]);
    add(header.inputs[f]);
    for (let slash = f.lastIndexOf('/'); slash > 0; slash = f.lastIndexOf('/', slash - 1)) add(header.inputs[f.slice(0, slash)]);
    for (const [glob, id] of header.globs) if (matchGlob(glob, f)) add([id]);
    if (!explained) return undefined;
  }
  return downstreamOf(hit, new Map(Object.entries(header.dependents)));
}

export interface PartialPlan {
  /** The stages to check (those the changed files reach) and the ones they depend on. */
  plan: Plan;
  select: Set<string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHeader(value: unknown): value is Header {
  if (!isObject(value) || typeof value.key !== 'string' || !isObject(value.pipeline) || !isObject(value.params)) return false;
  return (
    isObject(value.inputs) &&
    isObject(value.outputs) &&
    Array.isArray(value.globs) &&
    isObject(value.dependents) &&
    isObject(value.deps) &&
    isObject(value.at)
  );
}

function isInstanceLine(value: unknown, id: string): value is Omit<StageInstance, 'spec'> & { spec: Record<string, unknown> } {
  if (!isObject(value) || value.id !== id || typeof value.stageId !== 'string' || !isObject(value.vars) || !isObject(value.outputs))
    return false;
  return Array.isArray(value.inputs) && Array.isArray(value.needs) && isObject(value.spec) && typeof value.spec.id === 'string';
}

/**
 * The part of the last run's plan that the changed files reach, with what it depends on;
 * undefined (check everything) when there is no record for this key, it is damaged, or a
 * changed file is not a plain input or output of any stage.
 */
export function readPartialPlan(
  root: string,
  pipelineFile: string,
  key: string,
  changed: readonly string[],
  locate: Locate,
): PartialPlan | undefined {
  let text: string;
  try {
    text = readFileSync(planRecordFile(root, pipelineFile), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const newline = text.indexOf('\n');
    const header: unknown = JSON.parse(text.slice(0, newline));
    if (!isHeader(header) || header.key !== key) return undefined;
    const select = affectedFromIndex(header, changed);
    if (!select) return undefined;
    const wanted = new Set(select);
    for (const id of select) for (const d of header.deps[id] ?? []) wanted.add(d);
    // In the plan's own order, which is the order stages are started in.
    const needed = [...wanted].sort((a, b) => (header.at[a]?.[0] ?? 0) - (header.at[b]?.[0] ?? 0));
    const body = newline + 1;
    const specs = new Map<string, StageSpec>();
    const instances: StageInstance[] = [];
    for (const id of needed) {
      const at = header.at[id];
      if (!at) return undefined;
      const line: unknown = JSON.parse(text.slice(body + at[0], body + at[1]));
      if (!isInstanceLine(line, id)) return undefined;
      const stageId = line.spec.id as string;
      let spec = specs.get(stageId);
      if (!spec) {
        spec = unpackStage(line.spec, ['stages', stageId], locate);
        specs.set(stageId, spec);
      }
      instances.push({ ...line, spec });
    }
    const pipeline = { ...header.pipeline, stages: [...specs.values()] } as unknown as PipelineSpec;
    return { plan: { pipeline, root, params: header.params, instances, loops: [] }, select };
  } catch {
    return undefined;
  }
}
