// For `refinery plan`: the inputs a stage will not find when it starts. A stage whose upstream
// has yet to run cannot be judged by its own inputs (they may be that upstream's outputs), but a
// named input that is not on disk and that no stage of the plan writes will be missing all the
// same: the run fails that stage, and the plan says so beforehand.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import { isGlob } from '../paths/glob.ts';

/**
 * A stage's named inputs (globs aside: an empty match is not an error) that do not exist and
 * that no instance of the plan writes, itself or as a folder above what it writes.
 */
export function unwrittenInputs(instances: readonly StageInstance[], root: string): (inst: StageInstance) => string[] {
  const written = new Set<string>();
  for (const inst of instances)
    for (const o of Object.values(inst.outputs))
      for (let p = path.posix.normalize(o.path); p !== '.' && p !== '/' && !written.has(p); p = path.posix.dirname(p)) written.add(p);
  return (inst) =>
    inst.inputs.filter((input) => {
      const rel = path.posix.normalize(input);
      return !isGlob(input) && !written.has(rel) && !existsSync(path.resolve(root, rel));
    });
}
