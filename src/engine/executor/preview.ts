import type { Plan, StageInstance } from '../types/plan.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import { topologicalOrder } from '../graph/graph.ts';
import { planGraph } from '../graph/plan-graph.ts';
import { ArtifactReader } from './artifact-reader.ts';
import { assessStage, missingInputReason, stageCodeHash } from './assess.ts';
import { unwrittenInputs } from './unwritten-inputs.ts';

/**
 * `maybe`: it runs only if what a stage that will run first writes makes it: its `when` holds
 * over artifacts that stage has yet to write (`depends: 'when'`), or that stage writes other
 * bytes than this one last read (`depends: 'upstream-output'`, early cutoff: a run starts it
 * only then).
 */
export type PreviewDecision = 'run' | 'maybe' | 'fresh' | 'skip' | 'fail' | 'loop';

export interface PreviewEntry {
  id: string;
  decision: PreviewDecision;
  /** What a `maybe` waits on. */
  depends?: 'when' | 'upstream-output';
  reasons: string[];
  needs: string[];
}

export interface PreviewOptions {
  root: string;
  hashes: FileHashes;
  state: StageState;
  force: boolean;
  taskFile(name: string): string | undefined;
  schemaFile(name: string): string | undefined;
}

const PENDING: ReadonlySet<PreviewDecision> = new Set(['run', 'maybe', 'loop']);

/**
 * What a run would do, stage by stage, without running anything. A stage after one that will
 * run is judged as the run judges it: by what it reads, with the files that stage writes taken
 * as they were when it last read them; nothing else changed, it runs only if they come out
 * different (`maybe`).
 */
export function previewPlan(plan: Plan, options: PreviewOptions): PreviewEntry[] {
  const graph = planGraph(plan);
  const byId = new Map(plan.instances.map((i) => [i.id, i]));
  const reader = new ArtifactReader(options.root);
  const decisions = new Map<string, PreviewDecision>();
  const entries: PreviewEntry[] = [];
  // A loop's stages are expanded while it runs: what they write is not known here.
  const unwritten = plan.loops.length === 0 ? unwrittenInputs(plan.instances, options.root) : () => [];
  const ctx = {
    root: options.root,
    params: plan.params,
    vars: plan.vars,
    pipeline: plan.pipeline.name,
    hashes: options.hashes,
    force: options.force,
    codeHash: (inst: StageInstance) => stageCodeHash(inst, options.root, options.hashes, options.taskFile),
    taskFile: options.taskFile,
    schemaFile: options.schemaFile,
    selfArtifacts: (inst: StageInstance) => reader.own(inst),
  };
  const assess = (inst: StageInstance, needs: string[], pending: string[]): PreviewEntry => {
    const record = options.state.get(inst.id);
    const needed: Record<string, string> = {};
    for (const d of inst.needs) {
      if (!needs.includes(d)) continue;
      // An upstream that will run is taken to write what this stage last saw of it.
      needed[d] = pending.includes(d)
        ? (record?.parts.deps[d] ?? 'none')
        : decisions.get(d) === 'skip'
          ? 'skipped'
          : options.state.wrote(d);
    }
    const writes = new Set(pending.flatMap((d) => Object.values(byId.get(d)?.outputs ?? {}).map((o) => o.path)));
    const verdict = assessStage(
      inst,
      {
        needed,
        skipped: needs.filter((d) => decisions.get(d) === 'skip'),
        ...(writes.size > 0 ? { rewrites: (p: string) => writes.has(p) } : {}),
      },
      reader.view(needs.map((d) => byId.get(d)).filter((x): x is StageInstance => x !== undefined)),
      record,
      ctx,
    );
    if (pending.length > 0 && verdict.kind === 'fresh')
      return {
        id: inst.id,
        decision: 'maybe',
        depends: 'upstream-output',
        reasons: [`runs only if upstream ${pending.join(', ')} writes different output`],
        needs,
      };
    return {
      id: inst.id,
      decision: verdict.kind,
      reasons: verdict.kind === 'run' ? verdict.reasons : verdict.kind === 'fresh' ? ['up to date'] : [verdict.reason],
      needs,
    };
  };
  for (const id of topologicalOrder(graph.deps)) {
    const needs = [...(graph.deps.get(id) ?? [])];
    const inst = byId.get(id);
    if (!inst) {
      decisions.set(id, 'loop');
      entries.push({ id, decision: 'loop', reasons: ['a loop: its iterations are decided while it runs'], needs });
      continue;
    }
    const pending = needs.filter((d) => PENDING.has(decisions.get(d) as PreviewDecision));
    // As a run blocks what a failed stage reaches: its own inputs are not judged (they may be that stage's outputs).
    const failing = needs.filter((d) => decisions.get(d) === 'fail');
    let entry: PreviewEntry;
    // An input that is not there and that no stage writes fails the stage once its upstream has run.
    const unfound = pending.length > 0 && failing.length === 0 ? unwritten(inst) : [];
    const absent = unfound.length > 0 ? unfound : undefined;
    if (failing.length > 0) entry = { id, decision: 'fail', reasons: [`not started: upstream ${failing.join(', ')} would fail`], needs };
    else if (pending.length > 0 && inst.spec.when) {
      const then = absent ? [`if it holds, it fails: ${missingInputReason(absent, [])}`] : [];
      entry = {
        id,
        decision: 'maybe',
        depends: 'when',
        reasons: [`when: decided once upstream ${pending.join(', ')} has run`, ...then],
        needs,
      };
    } else if (absent) entry = { id, decision: 'fail', reasons: [missingInputReason(absent, [])], needs };
    else if (pending.some((d) => !byId.has(d))) {
      // What a loop's iterations write is known only as they run.
      entry = { id, decision: 'run', reasons: [`upstream ${pending.join(', ')} will run`], needs };
    } else entry = assess(inst, needs, pending);
    decisions.set(id, entry.decision);
    entries.push(entry);
  }
  return entries;
}
