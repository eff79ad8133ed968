import type { Plan, StageInstance } from '../types/plan.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import { topologicalOrder } from '../graph/graph.ts';
import { planGraph } from '../graph/plan-graph.ts';
import { ArtifactReader } from './artifact-reader.ts';
import { assessStage, missingInputReason, stageCodeHash } from './assess.ts';
import { unwrittenInputs } from './unwritten-inputs.ts';

/** `maybe`: it runs only if its `when` holds over artifacts a stage that will run has yet to write. */
export type PreviewDecision = 'run' | 'maybe' | 'fresh' | 'skip' | 'fail' | 'loop';

export interface PreviewEntry {
  id: string;
  decision: PreviewDecision;
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

/** What a run would do, stage by stage, without running anything. */
export function previewPlan(plan: Plan, options: PreviewOptions): PreviewEntry[] {
  const graph = planGraph(plan);
  const byId = new Map(plan.instances.map((i) => [i.id, i]));
  const reader = new ArtifactReader(options.root);
  const fingerprints = new Map<string, string>();
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
    schemaFile: options.schemaFile,
    selfArtifacts: (inst: StageInstance) => reader.own(inst),
  };
  for (const id of topologicalOrder(graph.deps)) {
    const needs = graph.deps.get(id) ?? [];
    const inst = byId.get(id);
    if (!inst) {
      decisions.set(id, 'loop');
      entries.push({ id, decision: 'loop', reasons: ['a loop: its iterations are decided while it runs'], needs });
      continue;
    }
    const pending = needs.filter((d) => ['run', 'maybe', 'loop'].includes(decisions.get(d) as string));
    // As a run blocks what a failed stage reaches: its own inputs are not judged (they may be that stage's outputs).
    const failing = needs.filter((d) => decisions.get(d) === 'fail');
    let entry: PreviewEntry;
    // An input that is not there and that no stage writes fails the stage once its upstream has run.
    const unfound = pending.length > 0 && failing.length === 0 ? unwritten(inst) : [];
    const absent = unfound.length > 0 ? unfound : undefined;
    if (failing.length > 0) entry = { id, decision: 'fail', reasons: [`not started: upstream ${failing.join(', ')} would fail`], needs };
    else if (pending.length > 0 && inst.spec.when) {
      const then = absent ? [`if it holds, it fails: ${missingInputReason(absent, {})}`] : [];
      entry = { id, decision: 'maybe', reasons: [`when: decided once upstream ${pending.join(', ')} has run`, ...then], needs };
    } else if (absent) entry = { id, decision: 'fail', reasons: [missingInputReason(absent, {})], needs };
    else if (pending.length > 0) entry = { id, decision: 'run', reasons: [`upstream ${pending.join(', ')} will run`], needs };
    else {
      const deps = Object.fromEntries(needs.map((d) => [d, fingerprints.get(d) ?? 'none']));
      const verdict = assessStage(
        inst,
        deps,
        reader.view(needs.map((d) => byId.get(d)).filter((x): x is StageInstance => x !== undefined)),
        options.state.get(id),
        ctx,
      );
      if (verdict.kind === 'fresh') fingerprints.set(id, verdict.fingerprint);
      if (verdict.kind === 'skip') fingerprints.set(id, 'skipped');
      entry = {
        id,
        decision: verdict.kind,
        reasons: verdict.kind === 'run' ? verdict.reasons : verdict.kind === 'fresh' ? ['up to date'] : [verdict.reason],
        needs,
      };
    }
    decisions.set(id, entry.decision);
    entries.push(entry);
  }
  return entries;
}
