// `run --only NAME`: a name that matches no stage is refused before the run starts, so that no
// run folder is made for it (status would list it as incomplete) and nothing is locked.
import { didYouMean } from '../diagnostics/format.ts';
import { unmatchedOnly } from '../executor/selection.ts';
import type { Plan } from '../types/plan.ts';

/** A pipeline of thousands of stages is not listed in full. */
const SHOWN = 30;

/** The error for `--only` names that match no stage of the plan (with a did-you-mean, or the stages); undefined when all match. */
export function onlyFlagError(plan: Plan, only: readonly string[]): string | undefined {
  if (only.length === 0) return undefined;
  const stageOf = new Map(plan.instances.map((i) => [i.id, i.stageId]));
  const ids = [...plan.instances.map((i) => i.id), ...plan.loops.map((l) => l.id)];
  const unknown = unmatchedOnly(ids, only, (id) => stageOf.get(id));
  if (unknown.length === 0) return undefined;
  // The names a user writes: stages (a foreach stage's instances share one) and loops.
  const names = [...new Set([...plan.instances.map((i) => i.stageId), ...plan.loops.map((l) => l.id)])].sort();
  const lines = unknown.map((name) => {
    const hint = didYouMean(name, names);
    return `--only ${name}: no stage '${name}' in pipeline '${plan.pipeline.name}'${hint ? `; did you mean '${hint}'?` : ''}`;
  });
  const shown = names.length > SHOWN ? `${names.slice(0, SHOWN).join(', ')} … (${names.length - SHOWN} more)` : names.join(', ');
  return `${lines.join('\n')}\nThe stages are: ${shown}`;
}
