// snapshot_mappings.json (spec §2.5): label -> snapshot; the most reliable map from dirs to labels.
import { int, obj, str } from './coerce.ts';
import type { SnapshotMapping, WarningSink } from './model.ts';

export function parseSnapshotMappings(value: unknown, rel: string, warn: WarningSink): SnapshotMapping[] | null {
  const root = obj(value);
  if (!root) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object keyed by label; ignored');
    return null;
  }
  const out: SnapshotMapping[] = [];
  let skipped = 0;
  for (const [label, raw] of Object.entries(root)) {
    const m = obj(raw);
    const agentId = str(m?.agent_id);
    const type = str(m?.type);
    if (!m || !agentId || !type) {
      skipped += 1;
      continue;
    }
    out.push({
      label: str(m.label) ?? label,
      type,
      agentId,
      timestamp: str(m.timestamp),
      votedFor: str(m.voted_for),
      votedForLabel: str(m.voted_for_label),
      iteration: int(m.iteration),
      round: int(m.round),
      path: str(m.path),
    });
  }
  if (skipped > 0) warn(rel, 'wrong-type', `${skipped} mapping(s) without type/agent_id were skipped`);
  return out;
}
