import type { StageInstance } from '../types/plan.ts';
import { isGlob, matchGlob, patternRoot } from '../paths/glob.ts';

/** Input patterns by the folder they start from: a file is tested only against the patterns of its own folders. */
class PatternsByFolder {
  private readonly byFolder = new Map<string, string[]>();

  add(pattern: string): void {
    const folder = patternRoot(pattern);
    const list = this.byFolder.get(folder);
    if (list) list.push(pattern);
    else this.byFolder.set(folder, [pattern]);
  }

  get size(): number {
    return this.byFolder.size;
  }

  /** Whether a pattern reads `file`: a glob matching it, the file named, or a folder holding it. */
  reads(file: string): boolean {
    for (let folder = file; ; ) {
      for (const pattern of this.byFolder.get(folder) ?? []) if (!isGlob(pattern) || matchGlob(pattern, file)) return true;
      if (folder === '') return false;
      const slash = folder.lastIndexOf('/');
      folder = slash < 0 ? '' : folder.slice(0, slash);
    }
  }
}

/**
 * Which files the no-op record may leave out: those only stages with final inputs read (their
 * `final_if` held after the run). Such a file is trusted by its folders' listings, which the
 * record keeps, so a file added or removed beside it still counts as a change; a rewrite in
 * place does not. Never left out: any stage's output, and any file another stage's inputs read
 * (another stage may not trust it). Undefined when no stage has final inputs.
 */
export function finalInputFiles(instances: readonly StageInstance[], final: ReadonlySet<string>): ((rel: string) => boolean) | undefined {
  const trusted = new PatternsByFolder();
  const others = new PatternsByFolder();
  const outputs = new Set<string>();
  for (const inst of instances) {
    for (const o of Object.values(inst.outputs)) outputs.add(o.path);
    const into = final.has(inst.id) ? trusted : others;
    for (const pattern of inst.inputs) into.add(pattern);
  }
  if (trusted.size === 0) return undefined;
  return (rel) => !outputs.has(rel) && trusted.reads(rel) && !others.reads(rel);
}
