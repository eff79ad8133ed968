import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import { isGlob, matchGlob, staticPrefix } from '../paths/glob.ts';
import type { LoadedPipeline } from '../session/open-pipeline.ts';
import type { FileChange } from './types.ts';
import { ancestorDirs } from '../paths/ancestors.ts';

/** Who writes an output path: the node that runs (a stage instance or a loop) and the record to check. */
interface Producer {
  node: string;
  record: string;
  output: string;
}

/** What a changed output is: our own write (ignore), someone else's edit, or not decidable yet. */
export type OwnWrite = 'own' | 'foreign' | 'defer';

export interface Classification {
  /** Instance and loop ids whose inputs (or outputs, edited by hand) changed. */
  affected: Set<string>;
  /** A path a foreach glob could match appeared or vanished: expand again. */
  reexpand: boolean;
  /** The pipeline file itself changed. */
  reload: boolean;
  /** Outputs of nodes running right now: decided once they finish. */
  deferred: FileChange[];
  /** Project task files that changed. */
  tasks: string[];
  /** Project schema files that changed (compiled validators must be dropped). */
  schemas: boolean;
}

function inside(root: string, file: string): string | undefined {
  const rel = path.relative(root, file).split(path.sep).join('/');
  return rel === '' || rel.startsWith('../') || rel === '..' || path.isAbsolute(rel) ? undefined : rel;
}

function addTo(map: Map<string, Set<string>>, key: string, id: string): void {
  const set = map.get(key);
  if (set) set.add(id);
  else map.set(key, new Set([id]));
}

/**
 * Maps changed paths to the stages they concern, for one expansion of a pipeline: exact
 * inputs (and directories holding them), glob inputs bucketed by their static prefix, outputs
 * and their writers, foreach globs, the pipeline file, project task and schema files.
 */
export class ChangeIndex {
  /** Root-relative paths to watch ('' is the whole project). */
  readonly targets = new Set<string>();
  /** Inputs outside the project root: never watched. */
  readonly outside: string[] = [];
  private readonly exact = new Map<string, Set<string>>();
  private readonly globs = new Map<string, Map<string, Set<string>>>();
  private readonly producers = new Map<string, Producer>();
  private readonly foreach: Array<{ prefix: string; depth: number; deep: boolean }> = [];
  private readonly taskFiles = new Map<string, Set<string>>();
  private readonly schemaFiles = new Map<string, Set<string>>();
  private readonly pipelineFile: string | undefined;

  constructor(root: string, pipeline: LoadedPipeline) {
    const { plan } = pipeline.expansion;
    for (const inst of plan.instances) this.addInstance(root, pipeline, inst, inst.id);
    for (const loop of plan.loops) {
      // Loop members exist only once the executor reaches them; their first iteration shows what they read.
      const first = pipeline.expansion.expandIteration(loop, 1);
      for (const inst of first.instances) this.addInstance(root, pipeline, inst, loop.id);
    }
    for (const glob of pipeline.foreachGlobs) {
      if (glob.startsWith('../') || path.isAbsolute(glob)) continue;
      const prefix = staticPrefix(glob);
      this.foreach.push({ prefix, depth: glob.split('/').length, deep: glob.includes('**') });
      this.targets.add(prefix);
    }
    this.pipelineFile = inside(root, pipeline.file);
    if (this.pipelineFile) this.targets.add(this.pipelineFile);
  }

  private addInstance(root: string, pipeline: LoadedPipeline, inst: StageInstance, node: string): void {
    for (const input of inst.inputs) {
      if (input === '..' || input.startsWith('../') || path.isAbsolute(input)) {
        this.outside.push(input);
        continue;
      }
      if (isGlob(input)) {
        const prefix = staticPrefix(input);
        let bucket = this.globs.get(prefix);
        if (!bucket) this.globs.set(prefix, (bucket = new Map()));
        addTo(bucket, input, node);
        this.targets.add(prefix);
      } else {
        addTo(this.exact, input, node);
        this.targets.add(input);
      }
    }
    for (const [output, o] of Object.entries(inst.outputs)) this.producers.set(o.path, { node, record: inst.id, output });
    const files: Array<[Map<string, Set<string>>, string | undefined]> = [];
    if (inst.spec.kind === 'task') files.push([this.taskFiles, pipeline.resolver.taskFile(inst.spec.task)]);
    for (const o of Object.values(inst.outputs)) if (o.schema) files.push([this.schemaFiles, pipeline.resolver.schemaFile(o.schema)]);
    for (const [map, file] of files) {
      const rel = file ? inside(root, file) : undefined;
      if (!rel) continue;
      addTo(map, rel, node);
      this.targets.add(rel);
    }
  }

  /** The nodes whose inputs include `file` (exactly, as a directory's content, or by a glob). */
  readers(file: string): Set<string> {
    const found = new Set<string>();
    const dirs = [...ancestorDirs(file), ''];
    for (const key of [file, ...dirs]) for (const id of this.exact.get(key) ?? []) found.add(id);
    for (const dir of [file, ...dirs]) {
      for (const [pattern, ids] of this.globs.get(dir) ?? []) if (matchGlob(pattern, file)) for (const id of ids) found.add(id);
    }
    return found;
  }

  private changesExpansion(change: FileChange): boolean {
    if (change.kind === 'change') return false;
    const depth = change.path.split('/').length;
    return this.foreach.some(
      (f) => (f.prefix === '' || change.path === f.prefix || change.path.startsWith(`${f.prefix}/`)) && (f.deep || depth <= f.depth + 1),
    );
  }

  /**
   * Sorts changes into what they affect. `ownWrite` tells whether a changed output is the one
   * its writer recorded (our own write: it retriggers nothing), an edit by someone else (its
   * writer reruns, as `refinery run` would), or not decidable while the writer runs.
   */
  classify(
    changes: readonly FileChange[],
    ownWrite: (producer: { node: string; record: string; output: string; path: string }) => OwnWrite,
  ): Classification {
    const out: Classification = { affected: new Set(), reexpand: false, reload: false, deferred: [], tasks: [], schemas: false };
    for (const change of changes) {
      const p = change.path;
      if (p === this.pipelineFile) {
        out.reload = true;
        continue;
      }
      if (this.changesExpansion(change)) out.reexpand = true;
      const task = this.taskFiles.get(p);
      if (task) {
        out.tasks.push(p);
        for (const id of task) out.affected.add(id);
      }
      const schema = this.schemaFiles.get(p);
      if (schema) {
        out.schemas = true;
        for (const id of schema) out.affected.add(id);
      }
      if (change.kind === 'addDir' || change.kind === 'unlinkDir') continue;
      const producer = this.producers.get(p);
      if (producer) {
        const verdict = ownWrite({ ...producer, path: p });
        if (verdict === 'defer') out.deferred.push(change);
        if (verdict !== 'foreign') continue;
        out.affected.add(producer.node);
      }
      for (const id of this.readers(p)) if (id !== producer?.node) out.affected.add(id);
    }
    return out;
  }
}
