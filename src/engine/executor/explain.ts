import type { FingerprintParts, StageRecord } from '../state/stage-state.ts';

function changedKeys(
  before: Record<string, string>,
  after: Record<string, string>,
): { added: string[]; removed: string[]; changed: string[] } {
  const added = Object.keys(after)
    .filter((k) => !(k in before))
    .sort();
  const removed = Object.keys(before)
    .filter((k) => !(k in after))
    .sort();
  const changed = Object.keys(after)
    .filter((k) => k in before && before[k] !== after[k])
    .sort();
  return { added, removed, changed };
}

function list(items: string[], max = 3): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** Why a stage with these parts is not up to date against its last record; [] when it is. */
export function explainChange(parts: FingerprintParts, record: StageRecord | undefined): string[] {
  if (!record) return ['it has never run (or its last run did not finish)'];
  const reasons: string[] = [];
  const before = record.parts;
  if (before.code !== parts.code) reasons.push('the task source or command changed');
  if (before.params !== parts.params) reasons.push('its params changed');
  const inputs = changedKeys(before.inputs, parts.inputs);
  if (inputs.changed.length) reasons.push(`input ${list(inputs.changed)} changed`);
  if (inputs.added.length) reasons.push(`input ${list(inputs.added)} is new`);
  if (inputs.removed.length) reasons.push(`input ${list(inputs.removed)} was removed`);
  const deps = changedKeys(before.deps, parts.deps);
  const depChanges = [...deps.changed, ...deps.added, ...deps.removed].sort();
  if (depChanges.length) reasons.push(`upstream ${list(depChanges)} changed`);
  const schemas = changedKeys(before.schemas, parts.schemas);
  const schemaChanges = [...schemas.changed, ...schemas.added, ...schemas.removed].sort();
  if (schemaChanges.length) reasons.push(`schema ${list(schemaChanges)} changed`);
  return reasons;
}
