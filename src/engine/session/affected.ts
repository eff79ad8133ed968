import type { Plan, StageInstance } from '../types/plan.ts';
import { downstreamOf } from '../graph/graph.ts';
import { planGraph } from '../graph/plan-graph.ts';
import { isGlob, matchGlob, patternRoot } from '../paths/glob.ts';

/** What changed since the last run, as the no-op record's comparison found it. */
export interface Changes {
  /** Files whose stat changed. */
  files: readonly string[];
  /** Folders whose listing changed (their mtime). */
  dirs: readonly string[];
  /** Every stage of the last run: a stage not among them is new, and is checked. */
  stages: readonly string[];
  /** Folders this run's expansion listed again: a changed one among them is explained by the expansion itself. */
  listedByExpansion: ReadonlySet<string> | ReadonlyMap<string, unknown>;
}

/** Whether `path` is `folder` or lies under it ('' is the project's root, over everything). */
function within(path: string, folder: string): boolean {
  return folder === '' || path === folder || path.startsWith(`${folder}/`);
}

/** Whether a stage's input walk lists `dir`: a glob walks from its fixed prefix, a folder input walks itself. */
function walks(inst: StageInstance, dir: string): boolean {
  return inst.inputs.some((pattern) => within(dir, patternRoot(pattern)));
}

/** Whether a stage reads or writes `file`: an output, an input named as it is, matched by a glob, or under a folder input. */
function touches(inst: StageInstance, file: string): boolean {
  for (const o of Object.values(inst.outputs)) if (o.path === file) return true;
  return inst.inputs.some((pattern) => (isGlob(pattern) ? matchGlob(pattern, file) : within(file, pattern)));
}

/**
 * The stages the changes can affect: those that read or write a changed file, those whose input
 * walk lists a changed folder, the stages new since the last run, and everything downstream of
 * them. Undefined when a change is explained by no stage (a task's source, a schema, a folder
 * nothing lists now) or the pipeline has loops: then every stage is checked.
 *
 * A changed folder needs no more than this: the expansion was run again in full (so a new
 * foreach item is a new stage here), and a stage whose inputs do not walk the folder read
 * nothing from its listing; its files are checked one by one by their stats.
 */
export function affectedStages(plan: Plan, changes: Changes): Set<string> | undefined {
  if (plan.loops.length > 0) return undefined;
  const hit = new Set<string>();
  for (const file of changes.files) {
    const reached = plan.instances.filter((inst) => touches(inst, file));
    if (reached.length === 0) return undefined;
    for (const inst of reached) hit.add(inst.id);
  }
  for (const dir of changes.dirs) {
    const reached = plan.instances.filter((inst) => walks(inst, dir));
    if (reached.length === 0 && !changes.listedByExpansion.has(dir)) return undefined;
    for (const inst of reached) hit.add(inst.id);
  }
  const known = new Set(changes.stages);
  for (const inst of plan.instances) if (!known.has(inst.id)) hit.add(inst.id);
  return downstreamOf(hit, planGraph(plan).dependents);
}
