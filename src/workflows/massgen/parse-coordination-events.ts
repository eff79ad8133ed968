// coordination_events.json (spec §2.4): the end-of-run event log; the primary source for correctness.
import { arr, num, obj, str, strings } from './coerce.ts';
import type { CoordinationEvent, CoordinationEvents, WarningSink } from './model.ts';

export function parseCoordinationEvents(value: unknown, rel: string, warn: WarningSink): CoordinationEvents | null {
  const root = obj(value);
  if (!root) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object at the top level; ignored');
    return null;
  }
  const meta = obj(root.session_metadata) ?? {};
  if (!Array.isArray(root.events)) warn(rel, 'wrong-type', '`events` is not an array; no coordination events read');
  const events: CoordinationEvent[] = [];
  let skipped = 0;
  for (const item of arr(root.events)) {
    const e = obj(item);
    const type = str(e?.event_type);
    if (!e || !type) {
      skipped += 1;
      continue;
    }
    events.push({
      timestamp: num(e.timestamp),
      type,
      agentId: str(e.agent_id),
      details: str(e.details) ?? '',
      context: obj(e.context) ?? {},
    });
  }
  if (skipped > 0) warn(rel, 'wrong-type', `${skipped} event(s) without an object shape or event_type were skipped`);
  return {
    userPrompt: str(meta.user_prompt),
    agentIds: strings(meta.agent_ids),
    startTime: num(meta.start_time),
    endTime: num(meta.end_time),
    finalWinner: str(meta.final_winner),
    events,
  };
}
