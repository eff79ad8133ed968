// coordination_events.json and snapshot_mappings.json (CoordinationTracker.save_coordination_logs).
import { epochFloat } from './clock.ts';
import type { AttemptRecord } from './model.ts';
import { pyJsonIndent, type PyValue } from './py-json.ts';

export function renderCoordinationEvents(rec: AttemptRecord): string {
  const end = rec.coordEvents.findLast((e) => e.type === 'session_end')?.at ?? rec.end;
  return pyJsonIndent({
    session_metadata: {
      user_prompt: rec.question,
      agent_ids: rec.agents,
      start_time: epochFloat(rec.start),
      end_time: epochFloat(end),
      final_winner: rec.final?.winner ?? null,
    },
    events: rec.coordEvents.map((e) => ({
      timestamp: epochFloat(e.at),
      event_type: e.type,
      agent_id: e.agent,
      details: e.details,
      context: e.context,
    })),
  });
}

export function renderSnapshotMappings(rec: AttemptRecord): string {
  const items: { at: number; label: string; value: PyValue }[] = [];
  for (const a of rec.answers) {
    items.push({
      at: a.at,
      label: a.label,
      value: {
        type: 'answer',
        label: a.label,
        agent_id: a.agent,
        timestamp: a.stamp,
        iteration: a.iteration,
        round: a.round,
        path: `${a.agent}/${a.stamp}/answer.txt`,
      },
    });
  }
  for (const v of rec.votes) {
    items.push({
      at: v.at,
      label: v.label,
      value: {
        type: 'vote',
        label: v.label,
        agent_id: v.agent,
        timestamp: v.stamp,
        voted_for: v.target,
        voted_for_label: v.targetLabel,
        iteration: v.iteration,
        round: v.round,
        path: `${v.agent}/${v.stamp}/vote.json`,
      },
    });
  }
  items.sort((x, y) => x.at - y.at);
  const out: Record<string, PyValue> = Object.fromEntries(items.map((i) => [i.label, i.value]));
  const fin = rec.final;
  if (fin) {
    out[fin.label] = {
      type: 'final_answer',
      label: fin.label,
      agent_id: fin.winner,
      timestamp: 'final',
      iteration: fin.iteration,
      round: fin.round,
      path: `final/${fin.winner}/answer.txt`,
    };
  }
  return pyJsonIndent(out);
}
