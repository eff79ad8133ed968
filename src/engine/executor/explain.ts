import type { FingerprintParts, StageRecord } from '../state/stage-state.ts';
import { paramChanges } from './param-values.ts';

function changedKeys(
  before: Record<string, string>,
  after: Record<string, string>,
  same: (key: string) => boolean = () => false,
): { added: string[]; removed: string[]; changed: string[] } {
  const added = Object.keys(after)
    .filter((k) => !(k in before) && !same(k))
    .sort();
  const removed = Object.keys(before)
    .filter((k) => !(k in after) && !same(k))
    .sort();
  const changed = Object.keys(after)
    .filter((k) => k in before && before[k] !== after[k] && !same(k))
    .sort();
  return { added, removed, changed };
}

/** A few items, then how many more. */
export function list(items: readonly string[], max = 3): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/**
 * Why a stage with these parts is not up to date against its last record; [] when nothing it
 * reads, its params or its code changed. `code` names what it runs ("task file tasks/x.ts",
 * "its command"). An upstream that ran again is no reason by itself: only what it wrote that
 * this stage reads (an input file, or the outputs of a stage it `needs:`). So an upstream no
 * longer needed is no reason either, and a record of an earlier refinery (which kept every
 * upstream's fingerprint) whose reads are the same gives []. Inputs `rewrites` holds are taken
 * as unchanged (refinery plan: a stage that will run first may write them again).
 */
export function explainChange(
  parts: FingerprintParts,
  record: StageRecord | undefined,
  code = 'the task source or command',
  rewrites?: (path: string) => boolean,
): string[] {
  if (!record) return ['it has never run (or its last run did not finish)'];
  const reasons: string[] = [];
  const before = record.parts;
  if (before.code !== parts.code) reasons.push(`${code} changed`);
  if (before.params !== parts.params) {
    const named = before.values && parts.values ? paramChanges(before.values, parts.values) : [];
    reasons.push(...(named.length > 0 ? named : ['its params changed']));
  }
  const inputs = changedKeys(before.inputs, parts.inputs, rewrites);
  if (inputs.changed.length) reasons.push(`input ${list(inputs.changed)} changed`);
  if (inputs.added.length) reasons.push(`input ${list(inputs.added)} is new`);
  if (inputs.removed.length) reasons.push(`input ${list(inputs.removed)} was removed`);
  const deps = changedKeys(before.deps, parts.deps);
  if (deps.changed.length) reasons.push(`output of upstream ${list(deps.changed)} changed`);
  if (deps.added.length) reasons.push(`it now needs upstream ${list(deps.added)}`);
  const schemas = changedKeys(before.schemas, parts.schemas);
  const schemaChanges = [...schemas.changed, ...schemas.added, ...schemas.removed].sort();
  if (schemaChanges.length) reasons.push(`schema ${list(schemaChanges)} changed`);
  return reasons;
}
