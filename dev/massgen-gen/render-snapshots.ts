// Agent snapshot dirs (<agent>/<ts>/answer.txt|vote.json|context.txt|execution_trace.md) and
// final/<winner>/ (Orchestrator._save_agent_snapshot).
import { epochFloat } from './clock.ts';
import type { AttemptRecord, VoteRecord } from './model.ts';
import { pyJsonIndent } from './py-json.ts';

export type FileMap = Map<string, string>;

function voteJson(rec: AttemptRecord, v: VoteRecord): string {
  const anonOf = (id: string): string => `agent${rec.sortedAgents.indexOf(id) + 1}`;
  const ownerOf = (label: string): string => rec.sortedAgents[Number(label.slice(5).split('.')[0]) - 1] ?? 'unknown';
  const options = [...new Set(v.seen.map(ownerOf))];
  return pyJsonIndent({
    voter_id: v.agent,
    voter_anon_id: anonOf(v.agent),
    voted_for: v.target,
    voted_for_label: v.targetLabel,
    voted_for_anon: anonOf(v.target),
    reason: v.reason,
    timestamp: v.stamp,
    unix_timestamp: epochFloat(v.at),
    iteration: v.iteration,
    coordination_round: v.trackerRound,
    available_options: options,
    available_options_labels: v.seen,
    answer_label_to_agent: Object.fromEntries(v.seen.map((l) => [l, ownerOf(l)])),
    available_options_anon: options.map(anonOf),
    agent_mapping: Object.fromEntries(rec.sortedAgents.map((a, i) => [`agent${i + 1}`, a])),
    vote_context: { total_agents: rec.agents.length, agents_with_answers: options.length, current_task: rec.question },
  });
}

export function snapshotFiles(rec: AttemptRecord, files: FileMap, prefix: string): void {
  for (const a of rec.answers) {
    const dir = `${prefix}/${a.agent}/${a.stamp}`;
    files.set(`${dir}/answer.txt`, a.text);
    files.set(`${dir}/context.txt`, pyJsonIndent(a.context));
    files.set(`${dir}/execution_trace.md`, a.trace);
  }
  for (const v of rec.votes) {
    const dir = `${prefix}/${v.agent}/${v.stamp}`;
    files.set(`${dir}/vote.json`, voteJson(rec, v));
    files.set(`${dir}/context.txt`, pyJsonIndent(v.context));
    files.set(`${dir}/execution_trace.md`, v.trace);
  }
}

export function finalFiles(rec: AttemptRecord, files: FileMap, finalDir: string): void {
  const fin = rec.final;
  if (!fin) return;
  files.set(`${finalDir}/${fin.winner}/answer.txt`, fin.text);
  files.set(`${finalDir}/${fin.winner}/context.txt`, pyJsonIndent(fin.context));
  files.set(`${finalDir}/${fin.winner}/execution_trace.md`, fin.trace);
}
