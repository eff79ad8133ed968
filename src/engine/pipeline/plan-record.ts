import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Plan, StageInstance } from '../types/plan.ts';
import type { PipelineSpec, StageSpec } from '../types/pipeline.ts';
import type { SourceSpan } from '../types/source.ts';
import { downstreamOf } from '../graph/graph.ts';
import { planGraph } from '../graph/plan-graph.ts';
import { isGlob, matchGlob } from '../paths/glob.ts';
import { writeFileAtomicSync } from '../state/atomic-file.ts';
import { encodeHashedIndex, HashedIndexReader } from '../state/hashed-index.ts';
import { readAt, readFirstLine } from '../state/read-at.ts';
import { manifestFile } from '../state/run-manifest.ts';
import { writeProblem, type WriteProblem } from '../state/write-problem.ts';
import { packStage, unpackStage } from './compact-spec.ts';

/**
 * The expanded plan of the run that wrote the no-op record, kept beside it so a run in which a
 * few files changed reads back only the stages they reach. The record's key covers the
 * pipeline file, the params and refinery's version; the no-op record's stat of the pipeline
 * file (a change to it always means the full check), its folder listings and `exists()` answers
 * cover the rest of what expansion looks at: while the key matches and only plain file stats
 * differ, expanding again would give this same plan.
 *
 * Layout, read in pieces so a touch of one file costs what it reaches, with ten stages or ten
 * thousand (no read of the whole index, no parse of entries it does not need):
 * - the header line: the form, the key, the pipeline without its stages, the params, every glob
 *   input (`[glob, id]`) and the sizes of the sections after it;
 * - the index (hashed-index.ts): a hash table of the entries' byte offsets, then the entries, one
 *   a line, each found by hashing its key and read alone: `"i:<path>"` → [ids reading it] (a
 *   folder input also covers the files under it), `"o:<path>"` → [ids writing it],
 *   `"n:<id>"` → [start, end, dependents, deps] (the byte range of its instance's line, counted
 *   from the end of the index, and its edges);
 * - one line per instance, read (by its byte range) and parsed only when that instance is needed.
 * The file's size must be the sum of its sections' (a record cut short or appended to is not used).
 */
interface Header {
  /** A record in an earlier form (one without this field: a searched index) is not read, only replaced. */
  form: typeof FORM;
  key: string;
  pipeline: Record<string, unknown>;
  params: Record<string, unknown>;
  /** The vars' values in that run (computed from the params, which the key covers). */
  vars: Record<string, unknown>;
  globs: Array<[string, string]>;
  /**
   * The index: its table's bucket count, its lines' bytes. Not `indexBytes`, the field the
   * earlier form's readers look for, so that one of them finds no index here either.
   */
  buckets: number;
  entryBytes: number;
  instanceBytes: number;
}

const FORM = 'plan record 3: hashed index, vars';

/** [start, end) of its line after the index, the ids that depend on it, the ids it depends on. */
type NodeEntry = [number, number, string[], string[]];

type Locate = (path: Array<string | number>) => SourceSpan | undefined;

export function planRecordFile(root: string, pipelineFile: string): string {
  return manifestFile(root, pipelineFile).replace(/noop-([^/]*)\.bin$/, 'plan-$1.jsonl');
}

function push(map: Map<string, string[]>, key: string, id: string): void {
  const ids = map.get(key);
  if (ids) ids.push(id);
  else map.set(key, [id]);
}

/** Written after a successful run with no loops, beside the no-op record; a failed write (a full disk) is returned, as the no-op record's is. */
export function writePlanRecord(root: string, key: string, plan: Plan): WriteProblem | undefined {
  const graph = planGraph(plan);
  const inputs = new Map<string, string[]>();
  const outputs = new Map<string, string[]>();
  const globs: Array<[string, string]> = [];
  const lines: string[] = [];
  const ranges: Array<[number, number]> = [];
  let offset = 0;
  for (const inst of plan.instances) {
    for (const o of Object.values(inst.outputs)) push(outputs, o.path, inst.id);
    for (const input of inst.inputs) {
      if (isGlob(input)) globs.push([input, inst.id]);
      else push(inputs, input, inst.id);
    }
    const { spec, ...rest } = inst;
    const line = `${JSON.stringify({ ...rest, spec: packStage(spec) })}\n`;
    const bytes = Buffer.byteLength(line);
    ranges.push([offset, offset + bytes - 1]);
    lines.push(line);
    offset += bytes;
  }
  const entries: Array<[string, unknown]> = [];
  for (const [path, ids] of inputs) entries.push([`i:${path}`, ids]);
  for (const [path, ids] of outputs) entries.push([`o:${path}`, ids]);
  plan.instances.forEach((inst, n) => {
    const [start, end] = ranges[n] as [number, number];
    entries.push([`n:${inst.id}`, [start, end, graph.dependents.get(inst.id) ?? [], graph.deps.get(inst.id) ?? []]]);
  });
  const index = encodeHashedIndex(entries);
  const header: Header = {
    form: FORM,
    key,
    pipeline: { ...plan.pipeline, stages: [] },
    params: plan.params,
    vars: plan.vars,
    globs,
    buckets: index.buckets,
    entryBytes: index.lines.length,
    instanceBytes: offset,
  };
  const text = Buffer.concat([
    Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'),
    index.table,
    index.lines,
    Buffer.from(lines.join(''), 'utf8'),
  ]);
  const file = planRecordFile(root, plan.pipeline.file);
  try {
    writeFileAtomicSync(file, text);
  } catch (error) {
    return writeProblem(file, error);
  }
  return undefined;
}

export interface PartialPlan {
  /** The stages to check (those the changed files reach) and the ones they depend on. */
  plan: Plan;
  select: Set<string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSize(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isHeader(value: unknown): value is Header {
  if (!isObject(value) || value.form !== FORM || typeof value.key !== 'string' || !isObject(value.pipeline) || !isObject(value.params))
    return false;
  if (!isObject(value.vars) || !isObject(value.pipeline.vars)) return false;
  return Array.isArray(value.globs) && isSize(value.buckets) && isSize(value.entryBytes) && isSize(value.instanceBytes);
}

function isIds(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((id) => typeof id === 'string');
}

function isNodeEntry(value: unknown): value is NodeEntry {
  return (
    Array.isArray(value) &&
    Number.isSafeInteger(value[0]) &&
    Number.isSafeInteger(value[1]) &&
    (value[1] as number) >= (value[0] as number) &&
    isIds(value[2]) &&
    isIds(value[3])
  );
}

function isInstanceLine(value: unknown, id: string): value is Omit<StageInstance, 'spec'> & { spec: Record<string, unknown> } {
  if (!isObject(value) || value.id !== id || typeof value.stageId !== 'string' || !isObject(value.vars) || !isObject(value.outputs))
    return false;
  return Array.isArray(value.inputs) && Array.isArray(value.needs) && isObject(value.spec) && typeof value.spec.id === 'string';
}

/** A part of the record that is not what the writer wrote: the caller checks everything instead. */
class Damaged extends Error {}

/** The index entries a run needs, parsed and checked as they are looked up. */
class PlanIndex {
  private readonly nodes = new Map<string, NodeEntry>();

  constructor(private readonly entries: HashedIndexReader) {}

  ids(key: string): string[] | undefined {
    const ids = this.entries.get(key);
    if (ids !== undefined && !isIds(ids)) throw new Damaged(key);
    return ids;
  }

  node(id: string): NodeEntry {
    let entry = this.nodes.get(id);
    if (!entry) {
      const value = this.entries.get(`n:${id}`);
      if (!isNodeEntry(value)) throw new Damaged(id);
      entry = value;
      this.nodes.set(id, entry);
    }
    return entry;
  }
}

/** The stages the changed files reach, as `affectedStages` finds them from the whole plan; undefined when a file is no stage's input or output. */
function affectedFromIndex(index: PlanIndex, globs: ReadonlyArray<[string, string]>, changed: readonly string[]): Set<string> | undefined {
  const hit = new Set<string>();
  for (const f of changed) {
    let explained = false;
    const add = (ids: readonly string[] | undefined): void => {
      if (!ids || ids.length === 0) return;
      explained = true;
      for (const id of ids) hit.add(id);
    };
    add(index.ids(`o:${f}`));
    add(index.ids(`i:${f}`));
    for (let slash = f.lastIndexOf('/'); slash > 0; slash = f.lastIndexOf('/', slash - 1)) add(index.ids(`i:${f.slice(0, slash)}`));
    for (const [glob, id] of globs) if (matchGlob(glob, f)) add([id]);
    if (!explained) return undefined;
  }
  return downstreamOf(hit, { get: (id: string) => index.node(id)[2] });
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
  let fd: number;
  try {
    fd = openSync(planRecordFile(root, pipelineFile), 'r');
  } catch {
    return undefined;
  }
  try {
    const first = readFirstLine(fd);
    const header: unknown = JSON.parse(first.line.toString('utf8'));
    const bytes = first.bytes;
    if (!isHeader(header) || header.key !== key) return undefined;
    const linesAt = bytes + 4 * header.buckets;
    const body = linesAt + header.entryBytes;
    if (fstatSync(fd).size !== body + header.instanceBytes) return undefined;
    const index = new PlanIndex(
      new HashedIndexReader(fd, { tableAt: bytes, buckets: header.buckets, linesAt, linesBytes: header.entryBytes }),
    );
    const select = affectedFromIndex(index, header.globs, changed);
    if (!select) return undefined;
    const wanted = new Set(select);
    for (const id of select) for (const d of index.node(id)[3]) wanted.add(d);
    // In the plan's own order, which is the order stages are started in.
    const needed = [...wanted].sort((a, b) => index.node(a)[0] - index.node(b)[0]);
    const specs = new Map<string, StageSpec>();
    const instances: StageInstance[] = [];
    for (const id of needed) {
      const [start, end] = index.node(id);
      const line: unknown = JSON.parse(readAt(fd, body + start, end - start).toString('utf8'));
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
    return { plan: { pipeline, root, params: header.params, vars: header.vars, instances, loops: [] }, select };
  } catch {
    // Damaged, cut short, or not JSON where JSON belongs.
    return undefined;
  } finally {
    closeSync(fd);
  }
}
